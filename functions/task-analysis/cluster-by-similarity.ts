import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { fail, ok } from '../../shared/core/contract.ts';
import { responseFormatField } from '../../shared/core/budget.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { parseVector } from '../documents/lib/ingest.ts';
import { agglomerativeClustering, CLUSTERING_DEFAULTS } from './lib/clustering.ts';
import { taskIds, tasksNotFound } from './lib/tasks.ts';
import { uuidArray } from '../../shared/runtime/db.ts';

/**
 * Groups tasks by meaning: exact agglomerative clustering of their embeddings (cosine similarity,
 * O(n²) nearest-neighbour chain), cut where clusters stop being similar enough.
 */
export default defineTool({
  id: 'cluster-by-similarity',
  title: 'Cluster by similarity',
  annotations: READ_ONLY,
  description:
    'Group 2 to 1000 tasks into clusters of similar meaning (exact hierarchical clustering of their embeddings). Two groups merge while their similarity is at least the threshold. Use it to find duplicates and themes.',
  input: z.strictObject({
    task_ids: taskIds(2, 1_000),
    threshold: z.number().min(0).max(1).default(CLUSTERING_DEFAULTS.threshold).describe('Least similarity for two groups to merge, 0 to 1 (default 0.75).'),
    linkage: z
      .enum(['average', 'complete', 'single'])
      .default(CLUSTERING_DEFAULTS.linkage)
      .describe('How group similarity is measured: average of all pairs (default), complete (least similar pair), single (most similar pair).'),
    response_format: responseFormatField,
  }),
  output: z.object({
    clusters: z.array(
      z.object({
        cluster_id: z.int(),
        task_ids: z.array(z.string()),
        size: z.int(),
        mean_similarity: z.number(),
        centroid: z.array(z.number()).optional(),
      }),
    ),
    summary: z.object({ task_count: z.int(), cluster_count: z.int(), largest_cluster_size: z.int(), singleton_count: z.int() }),
    unembedded_task_ids: z
      .array(z.string())
      .describe('Tasks left out: their embedding is pending or failed, or is a zero vector (a text in which the embedding model found nothing).'),
    merges: z.array(z.object({ left: z.int(), right: z.int(), similarity: z.number(), size: z.int() })).optional(),
  }),
  example: { task_ids: ['3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f', '9a1c2e3f-4b5d-4e6f-8a7b-0c1d2e3f4a5b'] },
  async execute({ task_ids, threshold, linkage, response_format }, { db, project, providers }) {
    const { rows } = await db.execute(sql`
      select id, embedding_status = 'completed' and embedding_model = ${providers.embeddings.id} as usable, embedding::text as embedding
      from tasks where project_id = ${project.id} and id = any(${uuidArray(task_ids)})`);
    const found = new Map((rows as { id: string; usable: boolean; embedding: string | null }[]).map((row) => [row.id, row]));
    const missing = task_ids.filter((id) => !found.has(id));
    if (missing.length) return tasksNotFound(missing);
    const vectors = new Map<string, Float32Array>();
    for (const id of task_ids) {
      const row = found.get(id)!;
      const vector = row.usable ? parseVector(row.embedding!) : undefined;
      // A zero vector (a text the model found nothing in) has no direction, so no similarity to anything.
      if (vector && hasDirection(vector)) vectors.set(id, vector);
    }
    const usable = task_ids.filter((id) => vectors.has(id));
    const unembedded = task_ids.filter((id) => !vectors.has(id));
    if (usable.length < 2) {
      return fail('VALIDATION_ERROR', `Only ${usable.length} of the ${task_ids.length} tasks have a usable embedding, and clustering needs at least 2.`, {
        hint: 'Embed pending or failed tasks with embed-tasks, then cluster again. Tasks whose embedding is a zero vector cannot be clustered.',
        details: { unembedded_task_ids: unembedded },
      });
    }

    const detailed = response_format === 'detailed';
    const result = agglomerativeClustering(usable.map((id) => vectors.get(id)!), { threshold, linkage, centroids: detailed });
    const clusters = result.clusters.map((cluster, index) => ({
      cluster_id: index + 1,
      task_ids: cluster.members.map((member) => usable[member]!),
      size: cluster.members.length,
      mean_similarity: Math.round(cluster.meanSimilarity * 10_000) / 10_000,
      ...(detailed && cluster.centroid ? { centroid: Array.from(cluster.centroid, (v) => Math.round(v * 1e6) / 1e6) } : {}),
    }));
    const summary = {
      task_count: usable.length,
      cluster_count: clusters.length,
      largest_cluster_size: clusters[0]?.size ?? 0,
      singleton_count: clusters.filter((c) => c.size === 1).length,
    };
    return ok(
      { clusters, summary, unembedded_task_ids: unembedded, ...(detailed ? { merges: result.merges } : {}) },
      `${summary.cluster_count} cluster${summary.cluster_count === 1 ? '' : 's'} of ${summary.task_count} tasks (largest ${summary.largest_cluster_size}, ${summary.singleton_count} singletons) at similarity >= ${threshold} with ${linkage} linkage.` +
        (unembedded.length ? ` ${unembedded.length} tasks without a usable embedding were left out (see unembedded_task_ids).` : ''),
    );
  },
});

/** Whether a vector has a direction: finite components, not all zero (cosine similarity is defined). */
function hasDirection(vector: Float32Array): boolean {
  let norm = 0;
  for (const value of vector) norm += value * value;
  return norm > 0 && Number.isFinite(norm);
}
