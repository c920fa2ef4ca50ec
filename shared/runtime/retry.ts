/**
 * The retry policy: transient failures are tried again a fixed number of times after a fixed
 * delay; anything else fails at once. One semaphore slot is held across all attempts of a call.
 */
import type { ErrorCode, Failure, Outcome } from '../core/contract.ts';

export interface RetryOptions {
  /** Extra attempts after the first one. */
  retries?: number;
  /** Fixed delay before each retry. */
  delayMs?: number;
  /** Stops waiting (and retrying) when the call is abandoned. */
  signal?: AbortSignal;
  /** Called before each retry, e.g. to log it. */
  onRetry?: (attempt: number, failure: Failure) => void;
}

export const DEFAULT_RETRIES = 2;
export const DEFAULT_RETRY_DELAY_MS = 2_000;

/** Failures worth trying again: only these codes, and only when marked retryable. */
const TRANSIENT_CODES: ReadonlySet<ErrorCode> = new Set(['DATABASE_ERROR', 'UPSTREAM_ERROR']);

/**
 * The one classifier of the retry policy. Database errors are marked retryable by
 * `databaseFailure` (connection failures, SQLSTATE 08xxx, 40001, 40P01, 53xxx, 57P01-57P03, HTTP
 * 5xx from the SQL endpoint); provider failures by the providers (network errors, HTTP 429 and 5xx).
 * DOCUMENT_DELETED, CONFLICT, validation and configuration errors are never retried.
 */
export function isTransient(failure: Failure): boolean {
  return failure.error.retryable && TRANSIENT_CODES.has(failure.error.code);
}

/** Runs `attempt` until it succeeds, fails for good, or runs out of retries. */
export async function withRetries<T>(
  attempt: (attemptNumber: number) => Promise<Outcome<T>>,
  { retries = DEFAULT_RETRIES, delayMs = DEFAULT_RETRY_DELAY_MS, signal, onRetry }: RetryOptions = {},
): Promise<{ outcome: Outcome<T>; attempts: number }> {
  for (let attemptNumber = 1; ; attemptNumber++) {
    const outcome = await attempt(attemptNumber);
    if (outcome.ok || !isTransient(outcome) || attemptNumber > retries || signal?.aborted) {
      return { outcome, attempts: attemptNumber };
    }
    onRetry?.(attemptNumber + 1, outcome);
    if (!(await sleep(delayMs, signal))) return { outcome, attempts: attemptNumber };
  }
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
