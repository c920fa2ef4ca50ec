/**
 * Exact agglomerative hierarchical clustering over cosine similarity.
 *
 * Similarity. The similarity of two vectors is their dot product (the vectors are expected to be
 * L2-normalised, so it is their cosine), summed in float64 in one fixed order by a WebAssembly SIMD
 * kernel (dot-products.ts: the products of the even dimensions in ascending order, plus those of the
 * odd dimensions), then rounded to a multiple of SIMILARITY_QUANTUM. A zero vector is orthogonal to
 * every vector, itself included: its similarities are all 0 (nothing is divided by a norm, so nothing
 * is NaN), and it joins a cluster only at a threshold <= 0.
 *
 * Cost: O(n²·d) for the similarity matrix (the dominant part) plus O(n²) for the dendrogram
 * (nearest-neighbour chain). Memory, in one WebAssembly memory: the n×n Float64 similarity matrix, and
 * in the same space one after the other the kernel's float64 copy of the input, then the n×n working
 * linkage matrix — about 20 MB for 1000 × 1536.
 *
 * Exactness. Similarities are rounded to multiples of SIMILARITY_QUANTUM (2⁻³⁰ ≈ 9.3e-10, far below
 * the ≈ 6e-8 precision of Float32 input), so every sum of fewer than 2²³ of them is exact in float64
 * and does not depend on summation order: average linkage computed from running sums here is
 * bit-identical to average linkage recomputed from the raw pairs by the textbook O(n³) algorithm
 * (test/unit/clustering-reference.ts, which computes each dot product plainly in the kernel's order),
 * and so are the mean similarities. That holds for n ≤ 4096 (n(n−1)/2 < 2²³ pairs) and vectors of
 * norm at most 1 (similarities within [−1, 1]).
 *
 * Ties. Candidate merges are ordered by linkage similarity (higher first); equal similarities go to
 * the pair of clusters whose largest member indices are smaller — compared by the larger of the two
 * largest indices, then the smaller. Merging only raises a cluster's largest index, so this order stays
 * reducible and the nearest-neighbour chain merges exactly what the greedy textbook algorithm with the
 * same rule merges.
 *
 * The dendrogram is built by the nearest-neighbour chain (nearest-neighbour-chain.ts); this module
 * computes the similarities, cuts the dendrogram at the threshold and describes the clusters.
 */
import { dotProducts, type DotProducts } from './dot-products.ts';
import { mergeOrder, nearestNeighbourChain, type ChainMerges, type Linkage } from './nearest-neighbour-chain.ts';

export type { Linkage };

export interface ClusteringOptions {
  /** Two clusters merge iff their linkage similarity is >= threshold. Default 0.75. */
  threshold?: number;
  /** average (UPGMA: mean of member pairs), complete (least similar pair), single (most similar pair). Default 'average'. */
  linkage?: Linkage;
  /** Also return each cluster's centroid. Default false. */
  centroids?: boolean;
}

/** The defaults of {@link ClusteringOptions}. */
export const CLUSTERING_DEFAULTS = { threshold: 0.75, linkage: 'average', centroids: false } as const satisfies Required<ClusteringOptions>;

/** Similarities are rounded to multiples of this (see the module comment). */
export const SIMILARITY_QUANTUM = 2 ** -30;

export interface Cluster {
  /** Indices into the input, ascending. */
  members: number[];
  /** Mean cosine similarity over the member pairs; 1 for a singleton. */
  meanSimilarity: number;
  /** The L2-normalised mean of the members (only with `centroids: true`; all zeros if the mean is zero). */
  centroid?: Float32Array;
}

/**
 * One row of the dendrogram in SciPy linkage-matrix convention: ids below n are input indices, id
 * n + k is the cluster formed by merges[k]; left < right.
 */
export interface Merge {
  left: number;
  right: number;
  /** The linkage similarity of the two merged clusters. */
  similarity: number;
  /** Number of inputs in the merged cluster. */
  size: number;
}

export interface ClusteringResult {
  /** Sorted by size (largest first), then by smallest member index. */
  clusters: Cluster[];
  /**
   * The full dendrogram (n − 1 rows), in merge order: similarity non-increasing, ties in the order
   * of the module comment. The clusters are the prefix of rows with similarity >= threshold.
   */
  merges: Merge[];
}

type ResolvedOptions = Required<ClusteringOptions>;

/**
 * Clusters L2-normalised vectors of equal dimension (typically 1536, n up to a few thousand):
 * cuts the dendrogram of `linkage` at `threshold`, so two clusters end up merged iff their linkage
 * similarity is >= threshold. Vectors are used as given (their dot product is the similarity).
 * Throws RangeError on unequal dimensions, non-finite components or a NaN threshold.
 */
export function agglomerativeClustering(vectors: Float32Array[], options: ClusteringOptions = {}): ClusteringResult {
  const resolved = resolveOptions(options);
  const n = vectors.length;
  if (n === 0) return { clusters: [], merges: [] };
  const { matrix: similarities, scratch: working } = similarityMatrix(vectors);
  working.set(similarities);
  const rows = nearestNeighbourChain(working, n, resolved.linkage);
  const order = mergeOrder(rows);
  return buildResult(vectors, similarities, rows, order, resolved);
}

const LINKAGES: readonly Linkage[] = ['average', 'complete', 'single'];

/** Fills in the defaults and rejects options no threshold comparison could honour. */
export function resolveOptions(options: ClusteringOptions): ResolvedOptions {
  const resolved = {
    threshold: options.threshold ?? CLUSTERING_DEFAULTS.threshold,
    linkage: options.linkage ?? CLUSTERING_DEFAULTS.linkage,
    centroids: options.centroids ?? CLUSTERING_DEFAULTS.centroids,
  };
  if (typeof resolved.threshold !== 'number' || Number.isNaN(resolved.threshold)) throw new RangeError('threshold must be a number');
  if (!LINKAGES.includes(resolved.linkage)) throw new RangeError(`unknown linkage: ${String(resolved.linkage)}`);
  return resolved;
}

/** Rounds a similarity to a multiple of SIMILARITY_QUANTUM (exact: the scale is a power of two). */
export function quantize(similarity: number): number {
  return Math.round(similarity / SIMILARITY_QUANTUM) * SIMILARITY_QUANTUM;
}

/**
 * The n×n row-major matrix of similarities of `vectors` (symmetric, diagonal included), with as much
 * scratch space again in the same memory. Each similarity is the kernel's float64 dot product
 * (dot-products.ts: even dimensions summed in order, plus odd dimensions summed in order), quantised.
 */
function similarityMatrix(vectors: Float32Array[]): DotProducts {
  const products = dotProducts(vectors);
  quantizeSymmetric(products.matrix, vectors.length);
  return products;
}

/** The quantised similarities of every pair of `vectors`: {@link similarityMatrix} without its scratch space. */
export function cosineSimilarities(vectors: Float32Array[]): Float64Array {
  return similarityMatrix(vectors).matrix;
}

/**
 * Quantises the upper triangle (diagonal included) and copies it into the lower one, in square blocks
 * so that both sides stay in cache.
 */
function quantizeSymmetric(m: Float64Array, n: number): void {
  const block = 64;
  for (let bi = 0; bi < n; bi += block) {
    for (let bj = bi; bj < n; bj += block) {
      const iEnd = Math.min(bi + block, n);
      const jEnd = Math.min(bj + block, n);
      for (let i = bi; i < iEnd; i++) {
        for (let j = Math.max(bj, i); j < jEnd; j++) {
          const s = quantize(m[i * n + j]!);
          m[i * n + j] = s;
          m[j * n + i] = s;
        }
      }
    }
  }
}

/** Union–find over input indices with path halving; `label` is each root's SciPy id. */
interface Forest {
  parent: Int32Array;
  label: Int32Array;
  size: Int32Array;
}

function newForest(n: number): Forest {
  return {
    parent: Int32Array.from({ length: n }, (_, i) => i),
    label: Int32Array.from({ length: n }, (_, i) => i),
    size: new Int32Array(n).fill(1),
  };
}

function findRoot(forest: Forest, i: number): number {
  const { parent } = forest;
  while (parent[i] !== i) {
    parent[i] = parent[parent[i]!]!;
    i = parent[i]!;
  }
  return i;
}

/** Unites the clusters of inputs a and b as SciPy cluster `id`, returning the merge row. */
function unite(forest: Forest, a: number, b: number, id: number, similarity: number): Merge {
  const ra = findRoot(forest, a);
  const rb = findRoot(forest, b);
  const left = Math.min(forest.label[ra]!, forest.label[rb]!);
  const right = Math.max(forest.label[ra]!, forest.label[rb]!);
  const size = forest.size[ra]! + forest.size[rb]!;
  forest.parent[rb] = ra;
  forest.size[ra] = size;
  forest.label[ra] = id;
  return { left, right, similarity, size };
}

function buildResult(
  vectors: Float32Array[],
  similarities: Float64Array,
  rows: ChainMerges,
  order: Int32Array,
  options: ResolvedOptions,
): ClusteringResult {
  const n = vectors.length;
  const forest = newForest(n);
  const merges: Merge[] = [];
  let clusters: number[][] | undefined;
  for (const r of order) {
    const similarity = rows.similarity[r]!;
    if (clusters === undefined && !(similarity >= options.threshold)) clusters = flatClusters(forest, n);
    merges.push(unite(forest, rows.a[r]!, rows.b[r]!, n + merges.length, similarity));
  }
  clusters ??= flatClusters(forest, n);
  return { clusters: describeClusters(clusters, vectors, similarities, options.centroids), merges };
}

/** The current partition: members ascending, clusters by size descending, then smallest member. */
function flatClusters(forest: Forest, n: number): number[][] {
  const byRoot = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const root = findRoot(forest, i);
    const members = byRoot.get(root);
    if (members) members.push(i);
    else byRoot.set(root, [i]);
  }
  return sortClusters([...byRoot.values()]);
}

/** Size descending, then smallest member index ascending (members must be ascending). */
function sortClusters(clusters: number[][]): number[][] {
  return clusters.sort((x, y) => y.length - x.length || x[0]! - y[0]!);
}

/** Adds mean similarity (and centroid) to each cluster's members. */
function describeClusters(clusters: number[][], vectors: Float32Array[], similarities: Float64Array, centroids: boolean): Cluster[] {
  const n = vectors.length;
  return clusters.map((members) => {
    const cluster: Cluster = { members, meanSimilarity: meanSimilarity(members, similarities, n) };
    if (centroids) cluster.centroid = centroid(members, vectors);
    return cluster;
  });
}

/** Mean of the quantised pair similarities; the sum is exact, so any summation order gives this value. */
function meanSimilarity(members: number[], similarities: Float64Array, n: number): number {
  const m = members.length;
  if (m < 2) return 1;
  let sum = 0;
  for (let x = 0; x < m; x++) {
    const row = members[x]! * n;
    for (let y = x + 1; y < m; y++) sum += similarities[row + members[y]!]!;
  }
  return sum / ((m * (m - 1)) / 2);
}

/** L2-normalised mean of the members, accumulated in float64 in member order. */
function centroid(members: number[], vectors: Float32Array[]): Float32Array {
  const d = vectors[0]!.length;
  const sum = new Float64Array(d);
  for (const i of members) {
    const v = vectors[i]!;
    for (let k = 0; k < d; k++) sum[k] = sum[k]! + v[k]!;
  }
  let norm = 0;
  for (let k = 0; k < d; k++) norm += sum[k]! * sum[k]!;
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  return Float32Array.from(sum, (x) => x * scale);
}
