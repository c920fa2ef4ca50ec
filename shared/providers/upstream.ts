/**
 * What the remote adapters (OpenAI-compatible HTTP, Workers AI) share: a deadline on every upstream
 * call, and one rule for which upstream statuses are worth retrying.
 */
import { ProviderError } from './types.ts';

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
