/**
 * A dense test embedder: every one of the 1536 components is non-zero, like the vectors of real
 * embedding models (the offline hashing embedder's are sparse, and short as pgvector text). Texts
 * that start with the same theme word land near the same centre. Deterministic.
 */
import { fnv1a } from '../../shared/core/fnv1a.ts';
import type { EmbeddingProvider } from '../../shared/core/providers.ts';

const DIMENSIONS = 1536;

/** A seeded PRNG (mulberry32) turned into standard normal samples. */
function gaussians(seed: number): () => number {
  let state = seed >>> 0;
  const uniform = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) + 0.5) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}

/** The theme's centre plus noise of `spread`, L2-normalised. */
function embedOne(text: string, spread: number): Float32Array {
  const theme = gaussians(fnv1a(text.split(' ')[0] ?? ''));
  const noise = gaussians(fnv1a(text));
  const vector = Float64Array.from({ length: DIMENSIONS }, () => theme() + spread * noise());
  const norm = Math.hypot(...vector);
  return Float32Array.from(vector, (x) => x / norm);
}

export function denseEmbedder(spread = 0.8): EmbeddingProvider {
  return {
    id: 'test-dense-v1',
    dimensions: DIMENSIONS,
    // Not calibrated: only clustering uses these vectors.
    defaultThreshold: 0.5,
    async embed(texts) {
      return texts.map((text) => embedOne(text, spread));
    },
  };
}
