/**
 * The exact answer a semantic search is judged against, for bench/task-analysis.ts: every embedded
 * task of a project embedded again in JS with the offline embedder, and the recall@k of a search's
 * results against the exact top k.
 */
import { sql } from 'drizzle-orm';
import type { Database } from '../shared/core/database.ts';
import { offlineEmbeddings } from '../shared/providers/offline.ts';
import { dot } from './measure.ts';

/** Every embedded task of the project, embedded again in JS: the exact reference. */
export interface Reference {
  ids: string[];
  index: Map<string, number>;
  vectors: Float32Array[];
}

/** The exact reference of the project's embedded tasks (offline embeddings), read in pages. */
export async function exactReference(db: Database, projectId: string): Promise<Reference> {
  const ids: string[] = [];
  const texts: string[] = [];
  // Pages of ids and texts: one answer must stay under the endpoint's 10 MB.
  for (let after = '00000000-0000-0000-0000-000000000000'; ;) {
    const { rows } = await db.execute(sql`select id, text from tasks
      where project_id = ${projectId} and embedding_status = 'completed' and id > ${after}::uuid order by id limit 20000`);
    if (rows.length === 0) break;
    for (const row of rows as { id: string; text: string }[]) {
      ids.push(row.id);
      texts.push(row.text);
    }
    after = ids.at(-1)!;
  }
  const vectors = await offlineEmbeddings.embed(texts);
  return { ids, index: new Map(ids.map((id, i) => [id, i])), vectors };
}

/** How a search's results compare with the exact top k. */
export interface Recall {
  /** Hits over k. */
  recall: number;
  /** The exact k-th best similarity, and the best similarity among the results. */
  kth: number;
  bestFound: number;
}

/**
 * Recall@k of `found` against the exact top k: a result is a hit if its exact similarity reaches
 * the k-th best, within `tolerance` (for ties at the k-th similarity, and float32 rounding).
 */
export function recallAt(k: number, query: Float32Array, found: string[], reference: Reference, tolerance: number): Recall {
  const similarities = reference.vectors.map((vector) => dot(vector, query));
  const kth = [...similarities].sort((a, b) => b - a)[k - 1] ?? -Infinity;
  const foundSimilarities = found.map((id) => similarities[reference.index.get(id)!]!);
  const hits = foundSimilarities.filter((similarity) => similarity >= kth - tolerance).length;
  return { recall: hits / Math.min(k, reference.ids.length), kth, bestFound: Math.max(...foundSimilarities) };
}
