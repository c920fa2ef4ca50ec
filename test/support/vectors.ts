/**
 * pgvector's text form read back (`embedding::text`), for tests that judge the tools' similarity
 * figures against the stored vectors themselves, independently of how the tools read them.
 */

/** Parses pgvector's text form, `[0.1,-2,3e-05]`, into a Float32Array. */
export function parseVector(text: string): Float32Array {
  const values = text.slice(1, -1).split(',');
  const vector = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) vector[i] = Number(values[i]);
  return vector;
}
