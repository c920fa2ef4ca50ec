/**
 * The dendrogram of agglomerative clustering by the nearest-neighbour chain (Murtagh 1983; Müllner
 * 2011), over a matrix of quantised similarities, and its merges sorted into the greedy textbook
 * order. clustering.ts computes the similarities and cuts the dendrogram; its module comment says
 * why the result is exact and how ties are broken (the pair with the smaller largest member indices
 * first), which keeps the order reducible, so the chain merges what the greedy algorithm merges.
 */

/** How the similarity of two clusters is derived from the similarities of their members. */
export type Linkage = 'average' | 'complete' | 'single';

/** The merges as the nearest-neighbour chain finds them (not yet in merge order). */
export interface ChainMerges {
  /** A member index of each merged cluster (the cluster's slot in the working matrix). */
  a: Int32Array;
  b: Int32Array;
  similarity: Float64Array;
  /** The larger / smaller of the two clusters' largest member indices: the tie-break keys. */
  high: Int32Array;
  low: Int32Array;
}

/** The working matrix and the active clusters, each living in the slot of one of its members. */
interface ChainState {
  /** Row k: cluster k's linkage similarities (for average linkage: sums over member pairs). */
  w: Float64Array;
  n: number;
  linkage: Linkage;
  size: Float64Array;
  largest: Int32Array;
  /** Slots of the active clusters (unordered: ties are broken by `largest`, never by position). */
  active: Int32Array;
  /** Where each slot sits in `active`. */
  position: Int32Array;
  count: number;
}

/**
 * Builds the full dendrogram with the nearest-neighbour chain algorithm (Murtagh 1983; Müllner 2011),
 * O(n²) for reducible linkages, which average, complete and single are: follow nearest neighbours
 * from any cluster until two clusters are each other's nearest, merge them, go on from the chain's
 * remainder. `w` (the similarity matrix) is overwritten.
 */
export function nearestNeighbourChain(w: Float64Array, n: number, linkage: Linkage): ChainMerges {
  const identity = () => Int32Array.from({ length: n }, (_, i) => i);
  const state: ChainState = {
    w,
    n,
    linkage,
    size: new Float64Array(n).fill(1),
    largest: identity(),
    active: identity(),
    position: identity(),
    count: n,
  };
  const merges: ChainMerges = {
    a: new Int32Array(n - 1),
    b: new Int32Array(n - 1),
    similarity: new Float64Array(n - 1),
    high: new Int32Array(n - 1),
    low: new Int32Array(n - 1),
  };
  const chain = new Int32Array(n);
  let length = 0;
  for (let step = 0; step < n - 1; step++) {
    if (length === 0) chain[length++] = state.active[0]!;
    length = growChain(state, chain, length);
    merge(state, merges, step, chain[length - 1]!, chain[length - 2]!);
    length -= 2;
  }
  return merges;
}

/** Extends the chain until its last two clusters are each other's nearest neighbours; returns its length. */
function growChain(state: ChainState, chain: Int32Array, length: number): number {
  for (;;) {
    const tip = chain[length - 1]!;
    const next = nearest(state, tip);
    if (length > 1 && next === chain[length - 2]) return length;
    chain[length++] = next;
  }
}

function linkageSimilarity(state: ChainState, i: number, j: number): number {
  const s = state.w[i * state.n + j]!;
  return state.linkage === 'average' ? s / (state.size[i]! * state.size[j]!) : s;
}

/** The active cluster most similar to `tip`; ties go to the smaller largest member index. */
function nearest(state: ChainState, tip: number): number {
  const { w, size, largest, active, count } = state;
  const row = tip * state.n;
  const tipSize = size[tip]!;
  const average = state.linkage === 'average';
  let best = -1;
  let bestSimilarity = -Infinity;
  let bestLargest = 0;
  for (let p = 0; p < count; p++) {
    const k = active[p]!;
    if (k === tip) continue;
    const s = average ? w[row + k]! / (tipSize * size[k]!) : w[row + k]!;
    if (s > bestSimilarity || (s === bestSimilarity && largest[k]! < bestLargest)) {
      best = k;
      bestSimilarity = s;
      bestLargest = largest[k]!;
    }
  }
  return best;
}

/** Records the merge of clusters a and b, then makes the lower slot the merged cluster. */
function merge(state: ChainState, merges: ChainMerges, step: number, a: number, b: number): void {
  const { size, largest } = state;
  merges.a[step] = a;
  merges.b[step] = b;
  merges.similarity[step] = linkageSimilarity(state, a, b);
  merges.high[step] = Math.max(largest[a]!, largest[b]!);
  merges.low[step] = Math.min(largest[a]!, largest[b]!);
  const keep = Math.min(a, b);
  const drop = Math.max(a, b);
  combineRows(state, keep, drop);
  size[keep] = size[keep]! + size[drop]!;
  largest[keep] = Math.max(largest[keep]!, largest[drop]!);
  removeActive(state, drop);
}

/** Row and column `keep` become the merged cluster's linkage (Lance–Williams; sums for average). */
function combineRows(state: ChainState, keep: number, drop: number): void {
  const { w, n, active, count, linkage } = state;
  const rowKeep = keep * n;
  const rowDrop = drop * n;
  for (let p = 0; p < count; p++) {
    const k = active[p]!;
    if (k === keep || k === drop) continue;
    const x = w[rowKeep + k]!;
    const y = w[rowDrop + k]!;
    const v = linkage === 'average' ? x + y : linkage === 'single' ? Math.max(x, y) : Math.min(x, y);
    w[rowKeep + k] = v;
    w[k * n + keep] = v;
  }
}

function removeActive(state: ChainState, slot: number): void {
  const { active, position } = state;
  const last = active[state.count - 1]!;
  const p = position[slot]!;
  active[p] = last;
  position[last] = p;
  state.count--;
}

/**
 * The chain's merges sorted into greedy order: similarity descending, then (high, low) ascending.
 * The tie-broken order is strict and reducible, so this is exactly the textbook algorithm's sequence.
 */
export function mergeOrder(merges: ChainMerges): Int32Array {
  const order = Int32Array.from({ length: merges.a.length }, (_, i) => i);
  const { similarity, high, low } = merges;
  return order.sort((x, y) => similarity[y]! - similarity[x]! || high[x]! - high[y]! || low[x]! - low[y]!);
}
