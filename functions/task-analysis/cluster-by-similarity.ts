import * as z from 'zod';
import { ANSWER_BUDGETS, fitToBudget, jsonLength, responseFormatField } from '../../shared/core/budget.ts';
import { fail, ok } from '../../shared/core/contract.ts';
import { cursorField, decodeCursor, encodeCursor, nextCursorField, positionIndex } from '../../shared/core/cursor.ts';
import { linkList } from '../../shared/core/links.ts';
import { plural } from '../../shared/core/plural.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { providersFromEnv } from '../../shared/providers/index.ts';
import { EXAMPLE_IDS } from '../../shared/records/example-ids.ts';
import { agglomerativeClustering, CLUSTERING_DEFAULTS, type ClusteringResult } from './lib/clustering.ts';
import { taskIds, tasksNotFound } from './lib/tasks.ts';
import { readTaskVectors } from '../../shared/records/vectors.ts';

/** Members shown for each cluster in every format. */
const REPRESENTATIVES = 3;
/** The stages a call reports as progress: the vectors read, then the tasks clustered. */
const CLUSTERING_STAGES = 2;
/** Ids of tasks without an embedding listed at most (their count is always given). */
const LISTED_UNEMBEDDED = 20;
/** The largest cluster is "giant" (and a higher threshold is suggested) from this share of at least GIANT_MIN_TASKS tasks. */
const GIANT_SHARE = 0.8;
const GIANT_MIN_TASKS = 10;

const clusterShape = z.object({
  cluster_id: z.int().describe('1 for the largest cluster, then by size.'),
  size: z.int(),
  mean_similarity: z
    .number()
    .nullable()
    .describe('Mean cosine similarity over the pairs of members, rounded to 4 decimals; null for a single task, which has no pair.'),
  representative_tasks: z
    .array(z.object({ task_id: z.string(), text: z.string() }))
    .describe(`Up to ${REPRESENTATIVES} members closest to the cluster's centre, most central first.`),
  task_ids: z
    .array(z.string())
    .optional()
    .describe(
      'detailed only: the members. A cluster larger than a page continues on the next page under the same cluster_id, from members_from.',
    ),
  members_from: z.int().optional().describe('detailed only: how many of the members earlier pages gave.'),
});

const mergeShape = z.object({
  merge: z.int().describe('The number of this merge, from 1, in merge order (most similar first).'),
  left: z.string().describe("A task id, or 'merge N' for the group that merge N formed."),
  right: z.string().describe("A task id, or 'merge N' for the group that merge N formed."),
  similarity: z.number().describe('The linkage similarity of the two groups.'),
  size: z.int().describe('Tasks in the merged group.'),
});

/** Where a page starts: a cluster (and how many of its members were given), then the merge tree. */
const position = z.strictObject({ cluster: positionIndex, member: positionIndex, merge: positionIndex });

/**
 * Groups tasks by meaning: exact agglomerative clustering of their embeddings (cosine similarity,
 * O(n²) nearest-neighbour chain), cut where clusters stop being similar enough. Concise answers
 * give each cluster's size and a few representative tasks; detailed ones add the members and the
 * merge tree. Both are paged within the answer budget.
 */
export default defineTool({
  id: 'cluster-by-similarity',
  toolset: 'task-analysis',
  title: 'Cluster by similarity',
  annotations: READ_ONLY,
  description:
    'Group known tasks by meaning (hierarchical clustering of their embeddings), for duplicates and themes; to find tasks on a topic, use semantic-search.',
  get input() {
    return z.strictObject({
      task_ids: taskIds(2, 1_000),
      threshold: z.number().min(0).max(1).default(CLUSTERING_DEFAULTS.threshold).describe('Least similarity for two groups to merge.'),
      linkage: z
        .enum(['average', 'complete', 'single'])
        .default(CLUSTERING_DEFAULTS.linkage)
        .describe('Group similarity: average of all pairs (default), complete: least similar pair, single: most similar.'),
      response_format: responseFormatField,
      cursor: cursorField.nullish(),
    });
  },
  get output() {
    return z.object({
      clusters: z.array(clusterShape),
      summary: z.object({ task_count: z.int(), cluster_count: z.int(), largest_cluster_size: z.int(), singleton_count: z.int() }),
      unembedded_task_count: z
        .int()
        .describe(
          'Tasks left out: their embedding is pending or failed (embed-tasks fixes that), or is a zero vector (a text in which the embedding model found nothing).',
        ),
      unembedded_task_ids: z.array(z.string()).describe(`The first ${LISTED_UNEMBEDDED} of them.`),
      merges: z
        .array(mergeShape)
        .optional()
        .describe('detailed only: the whole merge tree (task_count − 1 merges, the last joins everything), paged after the clusters.'),
      merges_from: z.int().optional().describe('detailed only: how many merges earlier pages gave.'),
      suggestion: z
        .string()
        .optional()
        .describe('A threshold that would give a more useful grouping, when one cluster holds almost everything or no two tasks grouped.'),
      next_cursor: nextCursorField,
    });
  },
  example: { task_ids: [...EXAMPLE_IDS.tasks] },
  providers: providersFromEnv,
  async execute({ task_ids, threshold, linkage, response_format, cursor }, { db, project, providers, links, progress }) {
    const scope = { task_ids, threshold, linkage, response_format };
    let from = { cluster: 0, member: 0, merge: 0 };
    if (cursor) {
      const decoded = decodeCursor(position, cursor, {
        scope,
        hint: `Example of a valid call: ${JSON.stringify({ task_ids: task_ids.slice(0, 3) })}`,
      });
      if (!decoded.ok) return decoded;
      from = decoded.value;
    }
    const found = await readTaskVectors(db, project.id, task_ids, providers.embeddings.id);
    const missing = task_ids.filter((id) => !found.has(id));
    if (missing.length) return tasksNotFound(missing);
    // A zero vector (a text the model found nothing in) has no direction, so no similarity to anything.
    const usable = task_ids.filter((id) => hasDirection(found.get(id)!.vector));
    const unembedded = task_ids.filter((id) => !hasDirection(found.get(id)!.vector));
    if (usable.length < 2) {
      return fail(
        'VALIDATION_ERROR',
        `Only ${usable.length} of the ${task_ids.length} tasks have a usable embedding, and clustering needs at least 2.`,
        {
          hint: 'Embed pending or failed tasks with embed-tasks, then cluster again. Tasks whose embedding is a zero vector cannot be clustered.',
          details: { unembedded_task_ids: unembedded.slice(0, LISTED_UNEMBEDDED), unembedded_task_count: unembedded.length },
        },
      );
    }

    progress(1, CLUSTERING_STAGES, `Read ${usable.length} task vectors`);
    const vectors = usable.map((id) => found.get(id)!.vector!);
    const result = agglomerativeClustering(vectors, { threshold, linkage, centroids: true });
    progress(2, CLUSTERING_STAGES, `Clustered into ${result.clusters.length} clusters`);
    const clusters = clusterEntries(result, usable, vectors, found);
    const summary = {
      task_count: usable.length,
      cluster_count: clusters.length,
      largest_cluster_size: clusters[0]?.size ?? 0,
      singleton_count: clusters.filter((c) => c.size === 1).length,
    };
    const merges = mergeEntries(result, usable);
    const page = response_format === 'detailed' ? detailedPage(clusters, merges, from) : concisePage(clusters, from);
    const next_cursor = page.next ? encodeCursor(page.next, scope) : null;
    const suggestion = suggest(summary, result, threshold);
    return ok(
      {
        clusters: page.clusters,
        summary,
        unembedded_task_count: unembedded.length,
        unembedded_task_ids: unembedded.slice(0, LISTED_UNEMBEDDED),
        ...(page.merges ? { merges: page.merges, merges_from: page.mergesFrom } : {}),
        ...(suggestion ? { suggestion } : {}),
        next_cursor,
      },
      `${plural(summary.cluster_count, 'cluster')} of ${plural(summary.task_count, 'task')} (largest ${summary.largest_cluster_size}, ${plural(summary.singleton_count, 'singleton')}) at similarity >= ${threshold} with ${linkage} linkage.` +
        (unembedded.length
          ? ` ${plural(unembedded.length, 'task')} without a usable embedding ${unembedded.length === 1 ? 'was' : 'were'} left out (see unembedded_task_ids).`
          : '') +
        (next_cursor
          ? ' The answer was cut to its budget: call again with the same fields and cursor set to next_cursor for the rest.'
          : '') +
        (suggestion ? ` ${suggestion}` : ''),
      {
        truncated: next_cursor !== null,
        links: linkList(
          page.clusters.flatMap((cluster) => cluster.representative_tasks.map((task) => links.task(task.task_id, task.text))),
        ),
      },
    );
  },
});

type ClusterEntry = z.output<typeof clusterShape>;
type Cluster = ClusterEntry & { members: string[] };
type Merge = z.output<typeof mergeShape>;
type Position = z.output<typeof position>;
interface Page {
  clusters: ClusterEntry[];
  merges?: Merge[];
  mergesFrom?: number;
  next: Position | null;
}

/**
 * The clusters as answered, largest first: numbered from 1, the mean similarity rounded to 4
 * decimals (null for a single task), the most central members shown with their text, and every
 * member's id for the detailed pages. `usable[i]` is the task of `vectors[i]`.
 */
function clusterEntries(
  result: ClusteringResult,
  usable: string[],
  vectors: Float32Array[],
  found: ReadonlyMap<string, { text: string }>,
): Cluster[] {
  return result.clusters.map((cluster, index) => ({
    cluster_id: index + 1,
    size: cluster.members.length,
    mean_similarity: cluster.members.length === 1 ? null : Math.round(cluster.meanSimilarity * 10_000) / 10_000,
    representative_tasks: mostCentral(cluster.members, cluster.centroid!, vectors).map((member) => ({
      task_id: usable[member]!,
      text: found.get(usable[member]!)!.text,
    })),
    members: cluster.members.map((member) => usable[member]!),
  }));
}

/** The merge tree as answered: numbered from 1, its nodes by name, similarities rounded to 4 decimals. */
function mergeEntries(result: ClusteringResult, usable: string[]): Merge[] {
  return result.merges.map((merge, index) => ({
    merge: index + 1,
    left: nodeName(merge.left, usable),
    right: nodeName(merge.right, usable),
    similarity: Math.round(merge.similarity * 10_000) / 10_000,
    size: merge.size,
  }));
}

/** A node of the merge tree (SciPy convention: below n an input, n + k the group of merge k) by name. */
function nodeName(node: number, usable: string[]): string {
  return node < usable.length ? usable[node]! : `merge ${node - usable.length + 1}`;
}

/** Concise: clusters with their sizes and representatives, as many as the budget holds. */
function concisePage(clusters: Cluster[], from: Position): Page {
  const entries = clusters.slice(from.cluster).map(({ members: _members, ...cluster }) => cluster);
  const page = fitToBudget(entries, ANSWER_BUDGETS.concise.list);
  const after = from.cluster + page.length;
  return { clusters: page, next: after < clusters.length ? { cluster: after, member: 0, merge: 0 } : null };
}

/** Detailed: clusters with their members (a large one split across pages), then the merge tree. */
function detailedPage(clusters: Cluster[], allMerges: Merge[], from: Position): Page {
  let budget = ANSWER_BUDGETS.detailed.list;
  const page: ClusterEntry[] = [];
  for (let index = from.cluster; index < clusters.length; index++) {
    const { members, ...cluster } = clusters[index]!;
    const start = index === from.cluster ? from.member : 0;
    const base = { ...cluster, task_ids: [] as string[], members_from: start };
    const fitted = fitToBudget(members.slice(start), budget - jsonLength(base), { atLeast: page.length === 0 ? 1 : 0 });
    if (fitted.length === 0) return { clusters: page, next: { cluster: index, member: start, merge: 0 } };
    const entry = { ...base, task_ids: fitted };
    page.push(entry);
    budget -= jsonLength(entry);
    if (start + fitted.length < members.length)
      return { clusters: page, next: { cluster: index, member: start + fitted.length, merge: 0 } };
  }
  const mergesFrom = from.cluster >= clusters.length ? from.merge : 0;
  const merges = fitToBudget(allMerges.slice(mergesFrom), budget, { atLeast: page.length === 0 ? 1 : 0 });
  const after = mergesFrom + merges.length;
  return {
    clusters: page,
    merges,
    mergesFrom,
    next: after < allMerges.length ? { cluster: clusters.length, member: 0, merge: after } : null,
  };
}

/** Whether a vector has a direction: finite components, not all zero (cosine similarity is defined). */
function hasDirection(vector: Float32Array | undefined): vector is Float32Array {
  if (!vector) return false;
  let norm = 0;
  for (const value of vector) norm += value * value;
  return norm > 0 && Number.isFinite(norm);
}

/** Up to REPRESENTATIVES members, those whose vectors are most similar to the cluster's centroid. */
function mostCentral(members: number[], centroid: Float32Array, vectors: Float32Array[]): number[] {
  const closeness = (member: number) => {
    let dot = 0;
    const vector = vectors[member]!;
    for (let i = 0; i < vector.length; i++) dot += vector[i]! * centroid[i]!;
    return dot;
  };
  return members
    .map((member) => ({ member, closeness: closeness(member) }))
    .sort((a, b) => b.closeness - a.closeness || a.member - b.member)
    .slice(0, REPRESENTATIVES)
    .map(({ member }) => member);
}

/**
 * A threshold that would group more usefully: above the similarity at which the largest cluster
 * formed, when it holds almost everything; at the most similar pair, when nothing grouped.
 */
function suggest(
  summary: { task_count: number; cluster_count: number; largest_cluster_size: number },
  result: ClusteringResult,
  threshold: number,
): string | undefined {
  const { task_count, cluster_count, largest_cluster_size } = summary;
  const giant = cluster_count === 1 ? task_count >= 3 : task_count >= GIANT_MIN_TASKS && largest_cluster_size >= GIANT_SHARE * task_count;
  if (giant) {
    const formed = result.merges.findLast((merge) => merge.similarity >= threshold && merge.size === largest_cluster_size);
    if (!formed || formed.similarity >= 1) return undefined;
    const above = Math.min(1, Math.floor(formed.similarity * 100 + 1) / 100);
    return `One cluster holds ${largest_cluster_size} of the ${task_count} tasks: raise the threshold to ${above} or more to split it into themes.`;
  }
  if (cluster_count === task_count && result.merges.length > 0) {
    const closest = Math.floor(result.merges[0]!.similarity * 100) / 100;
    if (closest < threshold)
      return `No two tasks are similar enough to group: the most similar pair is at ${closest}. Lower the threshold to ${closest} or less to see groups.`;
  }
  return undefined;
}
