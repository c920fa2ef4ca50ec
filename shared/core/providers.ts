/**
 * The provider ports: what a tool may ask of an embeddings model and of a dependency detector, and
 * the pair a tool receives in its context. The adapters (offline, OpenAI, Workers AI) and the choice
 * between them by configuration are in shared/providers/.
 */

/** Turns texts into vectors that can be stored in `tasks.embedding` and compared by cosine similarity. */
export interface EmbeddingProvider {
  /**
   * Labelled in results and stored next to every vector, e.g. 'offline-hashing-v2',
   * 'openai:text-embedding-3-small', 'workers-ai:@cf/baai/bge-base-en-v1.5'.
   */
  id: string;
  /** Native dimensions of this provider's vectors (<= 1536). */
  dimensions: number;
  /**
   * semantic-search's threshold when the caller gives none: the least cosine similarity that means
   * "related" for this model. Models differ widely (a hashing embedder rarely passes 0.5 for related
   * texts, text-embedding-ada-002 rarely drops below 0.7 for unrelated ones), so each adapter
   * declares its own and says where the figure comes from; EMBEDDINGS_THRESHOLD overrides it.
   */
  defaultThreshold: number;
  /** One L2-normalised vector per text, in input order, zero-padded to 1536 (`toStoredVector` in shared/providers/types.ts). */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

/** A task as the dependency detectors see it. */
export interface DependencyTask {
  id: string;
  text: string;
  documentId: string;
  documentTitle: string;
  /** Position of the task within its document (0-based). */
  position: number;
}

/** One detected edge between two of the given tasks (never a task to itself). */
export interface DetectedRelationship {
  sourceTaskId: string;
  targetTaskId: string;
  /**
   * 'prerequisite': the source must be done before the target can start;
   * 'blocks': the source currently stands in the way of the target;
   * 'related': the tasks concern the same thing, with no order between them.
   */
  type: 'prerequisite' | 'blocks' | 'related';
  /** 0..1 */
  confidence: number;
  /** Why the detector believes it, in one sentence a person can check. */
  rationale: string;
}

export interface DetectOptions {
  /** documentId -> the document's markdown, for detectors that read context. */
  documentContext?: Map<string, string>;
  signal?: AbortSignal;
}

/** Finds dependencies between tasks. */
export interface DependencyDetector {
  /** The detection method, stored as `detection_method`: e.g. 'offline-heuristic-v1', 'llm:openai:gpt-4o-mini'. */
  id: string;
  detect(tasks: DependencyTask[], options: DetectOptions): Promise<DetectedRelationship[]>;
}

/** The providers a tool receives in its context. */
export interface Providers {
  embeddings: EmbeddingProvider;
  dependencies: DependencyDetector;
}
