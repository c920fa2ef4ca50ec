/**
 * The offline defaults: no network, no key, deterministic. Embeddings come from the hashing embedder
 * (stemmed words and character trigrams, 1536-d, normalised); dependencies from the transparent
 * heuristic. Their ids ('offline-hashing-v2', 'offline-heuristic-v1') label every result that used them.
 */
import { detectDependencies, HEURISTIC_DETECTOR_ID } from './dependency-heuristic.ts';
import { embedText, HASHING_EMBEDDER_DIMENSIONS, HASHING_EMBEDDER_ID, HASHING_EMBEDDER_THRESHOLD } from './hashing-embedder.ts';
import type { DependencyDetector, EmbeddingProvider } from '../core/providers.ts';

/**
 * The hashing embedder as an {@link EmbeddingProvider}: already 1536-d and normalised, so no padding.
 * Its default threshold is measured on the seed corpus (HASHING_EMBEDDER_THRESHOLD).
 */
export const offlineEmbeddings: EmbeddingProvider = {
  id: HASHING_EMBEDDER_ID,
  dimensions: HASHING_EMBEDDER_DIMENSIONS,
  defaultThreshold: HASHING_EMBEDDER_THRESHOLD,
  async embed(texts, signal) {
    signal?.throwIfAborted();
    return texts.map((text) => embedText(text));
  },
};

/** The dependency heuristic as a {@link DependencyDetector}; it reads `documentContext` prose too. */
export const offlineDependencyDetector: DependencyDetector = {
  id: HEURISTIC_DETECTOR_ID,
  async detect(tasks, { documentContext, signal }) {
    signal?.throwIfAborted();
    return detectDependencies(tasks, { documentContext });
  },
};
