/**
 * The clustering library inside workerd, where the worker runs it: the kernel is the bundled .wasm
 * module and V8 is workerd's, not Node's. The unit tests cover the same code in Node more widely.
 */
import { describe, expect, it } from 'vitest';
import { agglomerativeClustering, type Linkage } from '../../functions/task-analysis/lib/clustering.ts';
import { dotProducts } from '../../functions/task-analysis/lib/dot-products.ts';
import { clusteredVectors, pairwiseLaneDot, referenceClustering } from '../unit/clustering-reference.ts';

describe('clustering inside workerd', () => {
  it.each([
    [31, 1536],
    [8, 7],
  ])('computes the dot products of the documented order, bit for bit (n=%i, d=%i)', (n, d) => {
    const vectors = clusteredVectors({ seed: 3, n, dimensions: d });
    const { matrix } = dotProducts(vectors);
    for (let i = 0; i < n; i++) {
      for (let j = i; j < n; j++) expect(matrix[i * n + j]).toBe(pairwiseLaneDot(vectors[i]!, vectors[j]!));
    }
  });

  it('clusters exactly as the O(n³) reference on every linkage', () => {
    const vectors = clusteredVectors({ seed: 4, n: 90 });
    for (const linkage of ['average', 'complete', 'single'] as Linkage[]) {
      const result = agglomerativeClustering(vectors, { linkage, centroids: true });
      expect(result.clusters.length).toBeGreaterThan(5);
      expect(result.clusters.length).toBeLessThan(85);
      expect(result).toEqual(referenceClustering(vectors, { linkage, centroids: true }));
    }
  });
});
