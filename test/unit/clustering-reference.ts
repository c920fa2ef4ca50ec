/**
 * The textbook O(n³) agglomerative clustering that functions/task-analysis/lib/clustering.ts must
 * reproduce exactly, and the seeded synthetic data both are tested and benchmarked on. Used by the unit
 * tests and bench/clustering.ts.
 */
import {
  quantize,
  resolveOptions,
  type Cluster,
  type ClusteringOptions,
  type ClusteringResult,
  type Linkage,
  type Merge,
} from '../../functions/task-analysis/lib/clustering.ts';
import { seededRandom } from '../../local/random.ts';

interface Group {
  /** SciPy id: the input index for a singleton, n + k for the cluster formed by merge k. */
  id: number;
  members: number[];
  largest: number;
}

/**
 * Same contract as `agglomerativeClustering`, computed the straightforward way: repeatedly merge the
 * most similar pair of clusters, the linkage recomputed from the raw pair similarities (plain dot
 * products in the kernel's summation order, quantised); ties go to the pair whose larger "largest member index" is
 * smaller, then whose smaller one is. The flat clusters are the clusters present when the best
 * remaining similarity first drops below the threshold.
 */
export function referenceClustering(vectors: Float32Array[], options: ClusteringOptions = {}): ClusteringResult {
  const { threshold, linkage, centroids } = resolveOptions(options);
  const n = vectors.length;
  const sim = naiveSimilarities(vectors);
  let groups: Group[] = vectors.map((_, i) => ({ id: i, members: [i], largest: i }));
  const merges: Merge[] = [];
  let flat: number[][] | undefined;
  while (groups.length > 1) {
    const { x, y, similarity } = bestPair(groups, sim, linkage);
    if (flat === undefined && !(similarity >= threshold)) flat = groups.map((g) => g.members);
    const a = groups[x]!;
    const b = groups[y]!;
    const members = [...a.members, ...b.members].sort((p, q) => p - q);
    merges.push({ left: Math.min(a.id, b.id), right: Math.max(a.id, b.id), similarity, size: members.length });
    groups = groups.filter((_, i) => i !== x && i !== y);
    groups.push({ id: n + merges.length - 1, members, largest: Math.max(a.largest, b.largest) });
  }
  flat ??= groups.map((g) => g.members);
  const clusters = flat
    .map((members): Cluster => {
      const cluster: Cluster = { members, meanSimilarity: meanPairSimilarity(members, sim) };
      if (centroids) cluster.centroid = normalisedMean(members, vectors);
      return cluster;
    })
    .sort((p, q) => q.members.length - p.members.length || p.members[0]! - q.members[0]!);
  return { clusters, merges };
}

/** Quantised {@link pairwiseLaneDot} of every pair, as nested arrays. */
export function naiveSimilarities(vectors: Float32Array[]): number[][] {
  return vectors.map((a) => vectors.map((b) => quantize(pairwiseLaneDot(a, b))));
}

/**
 * The dot product in the order of the SIMD kernel (dot-products.wat), computed plainly in float64:
 * the products of the even dimensions summed in ascending order, plus those of the odd dimensions.
 */
export function pairwiseLaneDot(a: Float32Array, b: Float32Array): number {
  let even = 0;
  let odd = 0;
  for (let k = 0; k < a.length; k += 2) {
    even += a[k]! * b[k]!;
    if (k + 1 < a.length) odd += a[k + 1]! * b[k + 1]!;
  }
  return even + odd;
}

function bestPair(groups: Group[], sim: number[][], linkage: Linkage): { x: number; y: number; similarity: number } {
  let best = { x: -1, y: -1, similarity: -Infinity, high: 0, low: 0 };
  for (let x = 0; x < groups.length; x++) {
    for (let y = x + 1; y < groups.length; y++) {
      const a = groups[x]!;
      const b = groups[y]!;
      const similarity = linkageSimilarity(a.members, b.members, sim, linkage);
      const high = Math.max(a.largest, b.largest);
      const low = Math.min(a.largest, b.largest);
      const better =
        similarity > best.similarity || (similarity === best.similarity && (high < best.high || (high === best.high && low < best.low)));
      if (better) best = { x, y, similarity, high, low };
    }
  }
  return best;
}

/** The linkage definition itself, from the raw pair similarities. */
function linkageSimilarity(a: number[], b: number[], sim: number[][], linkage: Linkage): number {
  let max = -Infinity;
  let min = Infinity;
  let sum = 0;
  for (const i of a) {
    for (const j of b) {
      const s = sim[i]![j]!;
      max = Math.max(max, s);
      min = Math.min(min, s);
      sum += s;
    }
  }
  if (linkage === 'single') return max;
  if (linkage === 'complete') return min;
  return sum / (a.length * b.length);
}

function meanPairSimilarity(members: number[], sim: number[][]): number {
  if (members.length < 2) return 1;
  let sum = 0;
  let count = 0;
  for (const i of members) {
    for (const j of members) {
      if (i < j) {
        sum += sim[i]![j]!;
        count++;
      }
    }
  }
  return sum / count;
}

function normalisedMean(members: number[], vectors: Float32Array[]): Float32Array {
  const d = vectors[0]!.length;
  const sum = new Float64Array(d);
  for (const i of members) for (let k = 0; k < d; k++) sum[k] = sum[k]! + vectors[i]![k]!;
  const norm = Math.sqrt(sum.reduce((s, x) => s + x * x, 0));
  return Float32Array.from(sum, (x) => (norm > 0 ? x / norm : 0));
}

export interface ClusteredDataOptions {
  seed: number;
  n: number;
  /** Default 1536. */
  dimensions?: number;
  /** Number of random unit centres. Default max(1, round(n / 8)). */
  centres?: number;
  /**
   * Noise scale: each centre gets a noise level in [0.5, 1.5) × spread / √d, so the similarity of two
   * members is about 1 / (1 + σ²d) and varies between clusters. Default 0.7.
   */
  spread?: number;
  /** Fraction of points that are pure noise (uniform directions, near-orthogonal to everything). Default 0.1. */
  outliers?: number;
}

/**
 * Seeded clustered unit vectors: a few random unit centres, each point a centre plus Gaussian noise,
 * normalised. (Uniform random high-dimensional vectors are all nearly orthogonal, so they cluster
 * trivially.) Each point draws its centre at random, so clusters interleave in index order.
 */
export function clusteredVectors(options: ClusteredDataOptions): Float32Array[] {
  const { seed, n, dimensions: d = 1536, spread = 0.7, outliers = 0.1 } = options;
  const random = seededRandom(seed);
  const gaussian = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const unit = (v: Float64Array) => {
    const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    return Float32Array.from(v, (x) => x / norm);
  };
  const centres = Array.from({ length: options.centres ?? Math.max(1, Math.round(n / 8)) }, () => ({
    direction: unit(Float64Array.from({ length: d }, gaussian)),
    sigma: ((0.5 + random()) * spread) / Math.sqrt(d),
  }));
  return Array.from({ length: n }, () => {
    if (random() < outliers) return unit(Float64Array.from({ length: d }, gaussian));
    const centre = centres[Math.floor(random() * centres.length)]!;
    return unit(Float64Array.from(centre.direction, (x) => x + centre.sigma * gaussian()));
  });
}
