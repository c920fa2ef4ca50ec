/**
 * What the remote adapters (OpenAI-compatible HTTP, Workers AI) share: a deadline on every upstream
 * call, and one rule for which upstream statuses are worth retrying.
 */
import { ProviderError, STORED_DIMENSIONS, toStoredVector } from './types.ts';

/** How long one upstream call may take before it is abandoned as a (retryable) timeout. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** Statuses that may succeed when repeated: request timeouts, rate limits and server errors. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * Runs one upstream call, ending it after `timeoutMs` or as soon as `signal` aborts, even when
 * `run` ignores the signal it is given. A timeout becomes a retryable {@link ProviderError}; a
 * cancelled call (the caller went away) a non-retryable one. Other errors pass through.
 */
export async function withDeadline<T>(
  provider: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const deadline = AbortSignal.timeout(timeoutMs);
  const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(combined.reason);
    if (combined.aborted) onAbort();
    else combined.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([run(combined), aborted]);
  } catch (error) {
    if (signal?.aborted) {
      throw new ProviderError(`The call to ${provider} was cancelled before it finished.`, {
        provider,
        retryable: false,
        cause: error,
      });
    }
    if (deadline.aborted) {
      throw new ProviderError(`${provider} did not answer within ${timeoutMs / 1000} s; this is usually temporary.`, {
        provider,
        retryable: true,
        cause: error,
      });
    }
    throw error;
  } finally {
    combined.removeEventListener('abort', onAbort);
  }
}

/** What {@link embedInBatches} needs of a remote embeddings adapter. */
export interface BatchEmbedding {
  /** The provider's id, named in every error. */
  id: string;
  /** The size every returned vector must have. */
  dimensions: number;
  /** Texts per upstream call. */
  batchSize: number;
  /** One upstream call: one raw vector per text, in the texts' order, or `undefined` when the answer has another shape. */
  fetchBatch(texts: string[], signal?: AbortSignal): Promise<readonly (readonly number[])[] | undefined>;
  /** Said when an answer is not one vector per text: what to check. */
  shapeHint: string;
  /** Said when a vector has the wrong size: what to set. */
  dimensionsHint: string;
}

/**
 * Embeds `texts` batch by batch through `fetchBatch`, checking that each answer holds one vector
 * per text of the expected size; any other answer is a non-retryable {@link ProviderError}, because
 * repeating the call would not change the model's output.
 */
export async function embedInBatches(
  { id, dimensions, batchSize, fetchBatch, shapeHint, dimensionsHint }: BatchEmbedding,
  texts: readonly string[],
  signal?: AbortSignal,
): Promise<Float32Array[]> {
  const vectors: Float32Array[] = [];
  for (let start = 0; start < texts.length; start += batchSize) {
    const batch = texts.slice(start, start + batchSize);
    const answer = await fetchBatch(batch, signal);
    if (answer?.length !== batch.length) {
      throw new ProviderError(`The embeddings provider ${id} answered without one vector per text; ${shapeHint}`, {
        provider: id,
        retryable: false,
      });
    }
    for (const vector of answer) {
      if (vector.length !== dimensions) {
        throw new ProviderError(
          `The embeddings provider ${id} returned ${vector.length}-dimensional vectors, but ${dimensions} were expected; ${dimensionsHint}`,
          { provider: id, retryable: false },
        );
      }
      vectors.push(toStoredVector(vector));
    }
  }
  return vectors;
}

/** Refuses an embeddings model whose vector size is unknown or larger than can be stored. */
export function assertStorableDimensions(model: string, dimensions: number | undefined): asserts dimensions is number {
  if (dimensions === undefined || dimensions > STORED_DIMENSIONS) {
    throw new RangeError(`Embeddings model '${model}' needs dimensions between 1 and ${STORED_DIMENSIONS} (EMBEDDINGS_DIMENSIONS).`);
  }
}
