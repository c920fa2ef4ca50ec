import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  agglomerativeClustering,
  cosineSimilarities,
  quantize,
  SIMILARITY_QUANTUM,
  type ClusteringResult,
  type Linkage,
} from '../../functions/task-analysis/lib/clustering.ts';
import { dotProducts } from '../../functions/task-analysis/lib/dot-products.ts';
import { seededRandom } from '../../local/random.ts';
import { clusteredVectors, naiveSimilarities, pairwiseLaneDot, referenceClustering } from './clustering-reference.ts';

const LINKAGES: Linkage[] = ['average', 'complete', 'single'];

/** Unit vectors at the given angles (degrees) in the plane. */
function angles(...degrees: number[]): Float32Array[] {
  return degrees.map((d) => Float32Array.of(Math.cos((d * Math.PI) / 180), Math.sin((d * Math.PI) / 180)));
}

function plainDot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let k = 0; k < a.length; k++) s += a[k]! * b[k]!;
  return s;
}

/** The invariants every result must satisfy, whatever the data. */
function expectWellFormed(result: ClusteringResult, vectors: Float32Array[], threshold: number): void {
  const n = vectors.length;
  const seen = result.clusters.flatMap((c) => c.members).sort((a, b) => a - b);
  expect(seen).toEqual(Array.from({ length: n }, (_, i) => i));
  for (const { members, meanSimilarity } of result.clusters) {
    expect(members).toEqual([...members].sort((a, b) => a - b));
    const pairs = members.flatMap((i, x) => members.slice(x + 1).map((j) => plainDot(vectors[i]!, vectors[j]!)));
    const expected = pairs.length === 0 ? 1 : pairs.reduce((s, v) => s + v, 0) / pairs.length;
    expect(Math.abs(meanSimilarity - expected)).toBeLessThan(1e-8);
  }
  const order = result.clusters.map((c) => [c.members.length, c.members[0]!]);
  expect(order).toEqual([...order].sort((a, b) => b[0]! - a[0]! || a[1]! - b[1]!));
  expect(result.merges).toHaveLength(Math.max(0, n - 1));
  const sizes = Array.from({ length: n }, () => 1);
  result.merges.forEach((merge, k) => {
    expect(merge.left).toBeLessThan(merge.right);
    expect(merge.right).toBeLessThan(n + k);
    expect(merge.size).toBe(sizes[merge.left]! + sizes[merge.right]!);
    sizes.push(merge.size);
    if (k > 0) expect(merge.similarity).toBeLessThanOrEqual(result.merges[k - 1]!.similarity);
  });
  const used = result.merges.flatMap((m) => [m.left, m.right]);
  expect(new Set(used).size).toBe(used.length);
  expect(result.clusters).toHaveLength(n - result.merges.filter((m) => m.similarity >= threshold).length);
}

/**
 * The exact dot product (no rounding at all): float32 components are integers times 2⁻¹⁴⁹, so their
 * products are integers times 2⁻²⁹⁸, summed here as BigInt; rounded to the nearest double at the end.
 */
function exactDot(a: Float32Array, b: Float32Array): number {
  let sum = 0n;
  for (let k = 0; k < a.length; k++) sum += BigInt(a[k]! * 2 ** 149) * BigInt(b[k]! * 2 ** 149);
  return Number(sum) / 2 ** 298;
}

/**
 * What any float64 summation of d exact products may be off by from the exact dot product:
 * γ_d · Σ|aₖbₖ|, with γ_d = d·u / (1 − d·u) and u = 2⁻⁵³ (Higham, Accuracy and Stability, §3.1).
 */
function summationErrorBound(a: Float32Array, b: Float32Array): number {
  const u = 2 ** -53;
  const gamma = (a.length * u) / (1 - a.length * u);
  let magnitude = 0;
  for (let k = 0; k < a.length; k++) magnitude += Math.abs(a[k]! * b[k]!);
  return gamma * magnitude;
}

describe('dotProducts (the WebAssembly SIMD kernel)', () => {
  it.each([
    [1, 1],
    [2, 2],
    [3, 3],
    [4, 17],
    [5, 1],
    [7, 5],
    [11, 1536],
  ])('gives the pairwise-lane float64 dot product, bit for bit, for n=%i, d=%i (every tile and lane remainder)', (n, d) => {
    const vectors = clusteredVectors({ seed: n * 31 + d, n, dimensions: d });
    const { matrix } = dotProducts(vectors);
    for (let i = 0; i < n; i++) {
      for (let j = i; j < n; j++) {
        expect(matrix[i * n + j]).toBe(pairwiseLaneDot(vectors[i]!, vectors[j]!));
        expect(Math.abs(matrix[i * n + j]! - exactDot(vectors[i]!, vectors[j]!))).toBeLessThanOrEqual(
          summationErrorBound(vectors[i]!, vectors[j]!),
        );
      }
    }
  });

  it('sums in its own documented order, which is not the sequential one', () => {
    // Products 1, 2⁻⁵⁴, −1, 0: sequentially 1 + 2⁻⁵⁴ rounds to 1 and the sum is 0; the even lane
    // gives 1 − 1 = 0 and the odd lane 2⁻⁵⁴, so the kernel's sum is 2⁻⁵⁴, the exact value.
    const a = Float32Array.of(1, 2 ** -27, -1, 0);
    const b = Float32Array.of(1, 2 ** -27, 1, 0);
    expect(plainDot(a, b)).toBe(0);
    expect(pairwiseLaneDot(a, b)).toBe(2 ** -54);
    expect(dotProducts([a, b]).matrix[1]).toBe(2 ** -54);
    expect(exactDot(a, b)).toBe(2 ** -54);
  });

  it('is within the float64 summation bound of the exact dot product for dense 1536-d vectors, and far below the quantum', () => {
    const vectors = clusteredVectors({ seed: 5, n: 40 });
    const { matrix } = dotProducts(vectors);
    let worst = 0;
    for (let i = 0; i < 40; i++) {
      for (let j = i; j < 40; j++) {
        const error = Math.abs(matrix[i * 40 + j]! - exactDot(vectors[i]!, vectors[j]!));
        expect(error).toBeLessThanOrEqual(summationErrorBound(vectors[i]!, vectors[j]!));
        worst = Math.max(worst, error);
      }
    }
    expect(worst).toBeLessThan(SIMILARITY_QUANTUM / 1000);
  });

  it('rejects unequal dimensions and non-finite components, naming the vector', () => {
    expect(() => dotProducts([Float32Array.of(1, 0), Float32Array.of(1, 0, 0)])).toThrow('vector 1 has 3 dimensions, expected 2');
    expect(() => dotProducts([Float32Array.of(1, 0, 0), Float32Array.of(0, 0, Infinity)])).toThrow('vector 1 has a non-finite component');
    expect(() => dotProducts([Float32Array.of(Number.NaN)])).toThrow('vector 0 has a non-finite component');
  });
});

describe('cosineSimilarities', () => {
  it.each([
    [1, 1],
    [4, 17],
    [10, 1536],
  ])(
    'is the symmetric matrix of quantised kernel dot products for n=%i, d=%i, within half a quantum (plus float64 rounding) of the exact ones',
    (n, d) => {
      const vectors = clusteredVectors({ seed: n * 17 + d, n, dimensions: d });
      const matrix = cosineSimilarities(vectors);
      const naive = naiveSimilarities(vectors);
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          expect(matrix[i * n + j]).toBe(naive[i]![j]);
          expect(matrix[i * n + j]).toBe(matrix[j * n + i]);
          const error = Math.abs(matrix[i * n + j]! - exactDot(vectors[i]!, vectors[j]!));
          expect(error).toBeLessThanOrEqual(SIMILARITY_QUANTUM / 2 + summationErrorBound(vectors[i]!, vectors[j]!));
        }
      }
    },
  );

  it('quantises to multiples of 2^-30', () => {
    expect(quantize(0.1) / SIMILARITY_QUANTUM).toBe(Math.round(0.1 * 2 ** 30));
    expect(Number.isInteger(quantize(-0.123456789) / SIMILARITY_QUANTUM)).toBe(true);
  });
});

describe('agglomerativeClustering: worked example (unit vectors at 0°, 30°, 60°, 90°)', () => {
  const vectors = angles(0, 30, 60, 90);
  const cos30 = Math.cos(Math.PI / 6);

  it('single linkage chains the neighbours into one cluster', () => {
    const { clusters, merges } = agglomerativeClustering(vectors, { linkage: 'single', threshold: 0.8 });
    expect(clusters.map((c) => c.members)).toEqual([[0, 1, 2, 3]]);
    // Three tied merges at cos 30°: the pair whose largest index is smallest goes first.
    expect(merges.map(({ left, right, size }) => [left, right, size])).toEqual([
      [0, 1, 2],
      [2, 4, 3],
      [3, 5, 4],
    ]);
    for (const merge of merges) expect(merge.similarity).toBeCloseTo(cos30, 6);
  });

  it('complete linkage keeps {0°, 30°} and {60°, 90°} apart (their least similar pair is 90° apart)', () => {
    const { clusters, merges } = agglomerativeClustering(vectors, { linkage: 'complete', threshold: 0.8 });
    expect(clusters.map((c) => c.members)).toEqual([
      [0, 1],
      [2, 3],
    ]);
    expect(merges[2]!.similarity).toBeCloseTo(0, 6);
  });

  it('average linkage merges the two pairs at the mean of the four cross similarities', () => {
    const { clusters, merges } = agglomerativeClustering(vectors, { threshold: 0.8 });
    expect(clusters.map((c) => c.members)).toEqual([
      [0, 1],
      [2, 3],
    ]);
    expect(merges[2]!.similarity).toBeCloseTo((0.5 + 0 + cos30 + 0.5) / 4, 6);
    expect(clusters[0]!.meanSimilarity).toBeCloseTo(cos30, 6);
  });

  it('threshold 0.4 lets average linkage join the pairs', () => {
    expect(agglomerativeClustering(vectors, { threshold: 0.4 }).clusters).toHaveLength(1);
  });
});

describe('agglomerativeClustering: edge cases', () => {
  it('returns nothing for no vectors and a singleton for one', () => {
    expect(agglomerativeClustering([])).toEqual({ clusters: [], merges: [] });
    expect(agglomerativeClustering([Float32Array.of(1, 0)])).toEqual({ clusters: [{ members: [0], meanSimilarity: 1 }], merges: [] });
  });

  it('merges at exactly the threshold (>=)', () => {
    const vectors = angles(0, 60);
    const similarity = cosineSimilarities(vectors)[1]!;
    expect(agglomerativeClustering(vectors, { threshold: similarity }).clusters).toHaveLength(1);
    expect(agglomerativeClustering(vectors, { threshold: similarity + SIMILARITY_QUANTUM }).clusters).toHaveLength(2);
  });

  it('treats identical vectors as one cluster even at threshold 1', () => {
    const v = Float32Array.of(1, 0, 0);
    const { clusters } = agglomerativeClustering([v, Float32Array.of(0, 1, 0), v, v], { threshold: 1 });
    expect(clusters.map((c) => c.members)).toEqual([[0, 2, 3], [1]]);
    expect(clusters[0]!.meanSimilarity).toBe(1);
  });

  it('returns normalised centroids on request', () => {
    const { clusters } = agglomerativeClustering(angles(0, 90, 180), { threshold: -0.5, linkage: 'single', centroids: true });
    expect(clusters).toHaveLength(1);
    const centroid = clusters[0]!.centroid!;
    expect(centroid[0]).toBeCloseTo(0, 6);
    expect(centroid[1]).toBeCloseTo(1, 6);
    const opposite = agglomerativeClustering([Float32Array.of(1, 0), Float32Array.of(-1, 0)], { threshold: -1, centroids: true })
      .clusters[0]!;
    expect([...opposite.centroid!]).toEqual([0, 0]);
    expect(agglomerativeClustering(angles(0, 90)).clusters[0]!.centroid).toBeUndefined();
  });

  it('treats a zero vector as orthogonal to every vector, itself included (similarity 0, never NaN)', () => {
    const x = Float32Array.of(1, 0, 0);
    const zero = new Float32Array(3);
    const vectors = [x, zero, x, zero, Float32Array.of(0, 1, 0)];
    const similarities = cosineSimilarities(vectors);
    for (let j = 0; j < 5; j++) {
      expect(similarities[1 * 5 + j]).toBe(0);
      expect(similarities[j * 5 + 3]).toBe(0);
    }
    for (const linkage of LINKAGES) {
      for (const threshold of [0.75, 0.5, 0, -1]) {
        const result = agglomerativeClustering(vectors, { linkage, threshold, centroids: true });
        expect(result).toEqual(referenceClustering(vectors, { linkage, threshold, centroids: true }));
        expectWellFormed(result, vectors, threshold);
        const numbers = [...result.merges.map((m) => m.similarity), ...result.clusters.flatMap((c) => [c.meanSimilarity, ...c.centroid!])];
        expect(numbers.every(Number.isFinite)).toBe(true);
      }
      // Above 0, a zero vector joins nothing; at 0 everything here is similar enough (all pairs are >= 0).
      expect(agglomerativeClustering(vectors, { linkage, threshold: 0.5 }).clusters.map((c) => c.members)).toEqual([[0, 2], [1], [3], [4]]);
      expect(agglomerativeClustering(vectors, { linkage, threshold: 0 }).clusters.map((c) => c.members)).toEqual([[0, 1, 2, 3, 4]]);
    }
    const zeros = agglomerativeClustering([zero, zero, zero], { threshold: 0, centroids: true });
    expect(zeros.clusters).toEqual([{ members: [0, 1, 2], meanSimilarity: 0, centroid: new Float32Array(3) }]);
    expect(agglomerativeClustering([zero, zero]).clusters.map((c) => c.meanSimilarity)).toEqual([1, 1]);
  });

  it('rejects unequal dimensions, non-finite components, a NaN threshold and unknown linkages', () => {
    expect(() => agglomerativeClustering([Float32Array.of(1, 0), Float32Array.of(1)])).toThrow(RangeError);
    expect(() => agglomerativeClustering([Float32Array.of(1, 0), Float32Array.of(Number.NaN, 0)])).toThrow(/non-finite/);
    expect(() => agglomerativeClustering(angles(0, 10), { threshold: Number.NaN })).toThrow(RangeError);
    expect(() => agglomerativeClustering(angles(0, 10), { linkage: 'ward' as Linkage })).toThrow(/unknown linkage/);
  });
});

describe('agglomerativeClustering equals the O(n³) reference', () => {
  const cases = [1, 2, 3].flatMap((seed) => [2, 3, 10, 60, 200].map((n) => ({ seed, n, dimensions: seed === 3 ? 12 : 1536 })));
  it.each(cases)(
    'seed $seed, n=$n, d=$dimensions: every linkage and threshold',
    ({ seed, n, dimensions }) => {
      const vectors = clusteredVectors({ seed, n, dimensions });
      for (const linkage of LINKAGES) {
        for (const threshold of [-1, 0, 0.3, 0.5, 0.75, 0.9, 1]) {
          const result = agglomerativeClustering(vectors, { linkage, threshold, centroids: n <= 10 });
          expect(result).toEqual(referenceClustering(vectors, { linkage, threshold, centroids: n <= 10 }));
          expectWellFormed(result, vectors, threshold);
          if (threshold === -1) expect(result.clusters).toHaveLength(1);
          if (threshold === 1) expect(result.clusters).toHaveLength(n);
        }
      }
      // The O(n³) reference takes seconds at n = 200 on a busy 2-core machine.
    },
    60_000,
  );

  it('has non-trivial clusters at the default threshold (the data is clustered)', () => {
    const { clusters } = agglomerativeClustering(clusteredVectors({ seed: 1, n: 200 }));
    expect(clusters.length).toBeGreaterThan(20);
    expect(clusters.length).toBeLessThan(180);
    expect(clusters[0]!.members.length).toBeGreaterThan(3);
  });

  it('breaks exact ties the same way (property: small vectors from {-1, 0, 1}, duplicates included)', () => {
    const component = fc.integer({ min: -1, max: 1 });
    const data = fc
      .integer({ min: 1, max: 4 })
      .chain((d) => fc.array(fc.array(component, { minLength: d, maxLength: d }), { minLength: 1, maxLength: 18 }));
    const threshold = fc.constantFrom(-1, -0.5, 0, 0.5, 0.7, 1);
    fc.assert(
      fc.property(data, threshold, fc.constantFrom(...LINKAGES), (rows, t, linkage) => {
        const vectors = rows.map((row) => {
          const norm = Math.hypot(...row);
          return Float32Array.from(row, (x) => (norm > 0 ? x / norm : 0));
        });
        const result = agglomerativeClustering(vectors, { threshold: t, linkage });
        expect(result).toEqual(referenceClustering(vectors, { threshold: t, linkage }));
        expectWellFormed(result, vectors, t);
      }),
      { numRuns: 400, seed: 20_251_122 },
    );
  });

  it('is well formed and equal to the reference for any clustered data and threshold (property)', () => {
    const input = fc.record({
      seed: fc.integer({ min: 0, max: 1_000_000 }),
      n: fc.integer({ min: 1, max: 40 }),
      dimensions: fc.constantFrom(2, 16, 64),
      spread: fc.double({ min: 0.1, max: 3, noNaN: true }),
    });
    const threshold = fc.double({ min: -1, max: 1, noNaN: true });
    fc.assert(
      fc.property(input, threshold, fc.constantFrom(...LINKAGES), (data, t, linkage) => {
        const vectors = clusteredVectors(data);
        const result = agglomerativeClustering(vectors, { threshold: t, linkage });
        expect(result).toEqual(referenceClustering(vectors, { threshold: t, linkage }));
        expectWellFormed(result, vectors, t);
      }),
      { numRuns: 300, seed: 11 },
    );
  });

  it('gives the same partition for every input order of distinct similarities (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.constantFrom(...LINKAGES), (seed, linkage) => {
        const vectors = clusteredVectors({ seed, n: 24, dimensions: 8 });
        const permutation = shuffle(
          vectors.map((_, i) => i),
          seededRandom(seed),
        );
        const direct = agglomerativeClustering(vectors, { linkage, threshold: 0.5 }).clusters.map((c) => c.members.sort((a, b) => a - b));
        const permuted = agglomerativeClustering(
          permutation.map((i) => vectors[i]!),
          { linkage, threshold: 0.5 },
        ).clusters.map((c) => c.members.map((i) => permutation[i]!).sort((a, b) => a - b));
        expect(sortPartition(permuted)).toEqual(sortPartition(direct));
      }),
      { numRuns: 60, seed: 7 },
    );
  });
});

function shuffle(items: number[], random: () => number): number[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

function sortPartition(clusters: number[][]): number[][] {
  return [...clusters].sort((a, b) => a[0]! - b[0]!);
}
