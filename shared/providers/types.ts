/**
 * The provider ports: embeddings and dependency detection. Tools depend on these interfaces only;
 * the adapters (offline, OpenAI-compatible HTTP, Workers AI) are chosen by configuration in
 * `createProviders` (./index.ts).
 */
import { EMBEDDING_DIMENSIONS } from '../../drizzle/schema.ts';
import { fail, type Failure } from '../core/contract.ts';

/**
 * The default threshold of a neural embeddings model nobody here has calibrated: related short
 * texts score above it and unrelated ones below it for current general-purpose models (e.g. OpenAI's
 * text-embedding-3 family). A deployment using such a model should measure its own data and set
 * EMBEDDINGS_THRESHOLD.
 */
export const UNCALIBRATED_THRESHOLD = 0.3;

export interface ProviderErrorOptions {
  /** The adapter that failed, e.g. 'openai:text-embedding-3-small'. */
  provider: string;
  /** HTTP status of the upstream answer, when there was one. */
  status?: number;
  /** May the same call succeed later (HTTP 408/429/5xx, network errors, timeouts)? */
  retryable: boolean;
  /** From the upstream's `retry-after` header, when it sent one. */
  retryAfterMs?: number;
  cause?: unknown;
}

/**
 * Thrown by the adapters. Its message is written for the agent and the operator (what failed and
 * what to change) and never contains a secret. Tools turn it into an UPSTREAM_ERROR with
 * {@link providerFailure}; the pipeline retries it when `retryable`.
 */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  readonly provider: string;
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, options: ProviderErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.provider = options.provider;
    this.status = options.status;
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * The UPSTREAM_ERROR failure for a {@link ProviderError}: retryable as the error says, with the
 * provider, the upstream status and any retry-after in `details`.
 *
 * @example
 * try { vectors = await providers.embeddings.embed(texts, signal); }
 * catch (error) { if (error instanceof ProviderError) return providerFailure(error); throw error; }
 */
export function providerFailure(error: ProviderError): Failure {
  const details: Record<string, unknown> = { provider: error.provider };
  if (error.status !== undefined) details.status = error.status;
  if (error.retryAfterMs !== undefined) details.retry_after_ms = error.retryAfterMs;
  return fail('UPSTREAM_ERROR', error.message, {
    retryable: error.retryable,
    details,
    cause: error,
    ...(error.retryable ? { hint: 'The provider failure is temporary: the same call may succeed in a moment.' } : {}),
  });
}

/** Every stored vector has this many dimensions (`tasks.embedding` is vector(1536)). */
export const STORED_DIMENSIONS = EMBEDDING_DIMENSIONS;

/**
 * L2-normalises a provider's vector and zero-pads it to {@link STORED_DIMENSIONS}, so every
 * provider's vectors fit the one `vector(1536)` column.
 *
 * Padding leaves cosine similarity unchanged: the extra components are zero, so they add nothing
 * to the dot product of two padded vectors, nor to either norm. Two 768-d vectors have exactly the
 * same cosine similarity (and inner product, and L2 distance) before and after padding.
 *
 * It does NOT make vectors of different providers comparable: each provider spans its own space,
 * and a padded 768-d vector against a 1536-d one measures nothing. That is why every vector is
 * stored with its provider id (`tasks.embedding_model`) and searches only compare vectors with the
 * same id. A zero vector (nothing to embed) stays zero rather than dividing by zero.
 */
export function toStoredVector(values: ArrayLike<number>): Float32Array {
  if (values.length > STORED_DIMENSIONS) {
    throw new RangeError(`A vector has ${values.length} dimensions; at most ${STORED_DIMENSIONS} can be stored.`);
  }
  let squares = 0;
  for (let i = 0; i < values.length; i++) squares += values[i]! * values[i]!;
  const scale = squares > 0 ? 1 / Math.sqrt(squares) : 0;
  const stored = new Float32Array(STORED_DIMENSIONS);
  for (let i = 0; i < values.length; i++) stored[i] = values[i]! * scale;
  return stored;
}
