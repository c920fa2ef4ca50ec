/**
 * The pieces of feature hashing the offline embedder is made of (shared/providers/hashing-embedder.ts,
 * and its frozen first version, the retrieval benchmark's "before"): features of a text are hashed
 * into the dimensions of a vector, each with a sign, and the vector is L2-normalised.
 */

/** Code-point trigrams of `<term>`; a one-letter term gives its single "<x>". */
export function trigrams(term: string): string[] {
  const points = ['<', ...term, '>'];
  const grams: string[] = [];
  for (let i = 0; i + 3 <= points.length; i++) grams.push(points[i]! + points[i + 1]! + points[i + 2]!);
  return grams;
}

/**
 * Adds `amount` to the dimension `hash` falls in (hash mod dimensions), with a sign from a bit of
 * the hash's murmur3 finaliser, so that collisions cancel on average rather than pile up.
 */
export function addHashed(vector: Float64Array, hash: number, amount: number): void {
  const index = hash % vector.length;
  vector[index] = vector[index]! + (fmix32(hash) & 1 ? -amount : amount);
}

/** murmur3's 32-bit finaliser: decorrelates the sign bit from the bucket (hash mod dimensions). */
function fmix32(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** `vector` scaled to length 1, as float32; the zero vector stays zero. */
export function normalise(vector: Float64Array): Float32Array {
  let squares = 0;
  for (const x of vector) squares += x * x;
  const scale = squares > 0 ? 1 / Math.sqrt(squares) : 0;
  return Float32Array.from(vector, (x) => x * scale);
}
