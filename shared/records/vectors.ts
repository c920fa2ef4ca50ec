/**
 * Task embeddings to and from the database, for the document tools (which store them) and the
 * task-analysis tools (which search and compare them).
 *
 * Written (and sent as a query vector) in pgvector's text form, {@link vectorLiteral}. Read back
 * compactly and in batches, so that no database answer nears the 10 MB limit of Neon's HTTP
 * endpoint: 1,000 dense 1536-d vectors are about 17 MB as pgvector text. Each vector travels in
 * pgvector's binary form (`vector_send`: int16 dimensions, int16
 * unused, then the float4 values, big-endian), base64-encoded: 8,200 characters for 1536
 * dimensions, exactly the stored values. Batches of {@link VECTOR_BATCH_SIZE} go out in parallel.
 */
import { sql } from 'drizzle-orm';
import { uuidArray, type Database } from '../core/database.ts';

/** pgvector's text form. Eight significant digits keep float32 precision at a third of the size. */
export function vectorLiteral(vector: Float32Array): string {
  let text = '[';
  for (let i = 0; i < vector.length; i++) text += (i ? ',' : '') + (vector[i] === 0 ? '0' : vector[i]!.toPrecision(8));
  return text + ']';
}

/** Vectors per query: about 2 MB of answer for 1536 dimensions, a fifth of Neon's limit. */
const VECTOR_BATCH_SIZE = 250;

export interface StoredTaskVector {
  text: string;
  /** Set when the task is embedded by `model`; vectors of other providers are never compared. */
  vector?: Float32Array;
}

/** The tasks `ids` of the project with their texts and, where usable, their vectors (absent ids are absent). */
export async function readTaskVectors(
  db: Database,
  projectId: string,
  ids: readonly string[],
  model: string,
): Promise<Map<string, StoredTaskVector>> {
  const batches: string[][] = [];
  for (let start = 0; start < ids.length; start += VECTOR_BATCH_SIZE) batches.push(ids.slice(start, start + VECTOR_BATCH_SIZE));
  const answers = await Promise.all(
    batches.map((batch) =>
      db.execute(sql`select id, text,
          case when embedding_status = 'completed' and embedding_model = ${model}
               then translate(encode(vector_send(embedding), 'base64'), E'\\n', '') end as embedding
        from tasks where project_id = ${projectId} and id = any(${uuidArray(batch)})`),
    ),
  );
  const found = new Map<string, StoredTaskVector>();
  for (const { rows } of answers) {
    for (const row of rows as { id: string; text: string; embedding: string | null }[]) {
      found.set(row.id, row.embedding === null ? { text: row.text } : { text: row.text, vector: decodeVector(row.embedding) });
    }
  }
  return found;
}

/** Decodes pgvector's binary form, base64-encoded, into its float32 values. */
function decodeVector(base64: string): Float32Array {
  const binary = atob(base64);
  const view = new DataView(Uint8Array.from(binary, (c) => c.charCodeAt(0)).buffer);
  const dimensions = view.getInt16(0);
  const vector = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) vector[i] = view.getFloat32(4 + 4 * i);
  return vector;
}
