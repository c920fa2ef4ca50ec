/**
 * The retry policy: transient failures are tried again a fixed number of times after a fixed
 * delay; anything else fails at once. An attempt that may have written keeps being tried while the
 * database does not answer (see {@link RetryOptions.settleMs}). One semaphore slot is held across
 * all attempts of a call.
 */
import type { ErrorCode, Failure, Outcome } from '../core/contract.ts';

export interface RetryOptions {
  /** Extra attempts after the first one. */
  retries?: number;
  /** Fixed delay before each retry. */
  delayMs?: number;
  /**
   * For an attempt that may have written (a write tool's): once the retries are spent on a
   * failure that {@link leavesWriteUnknown}, the attempt is run again until it answers anything
   * else, for at most this long, the delay doubling from `delayMs` up to `maxDelayMs` (the last
   * one shortened to end at the ceiling). Such an attempt is idempotent, so running it again is
   * how an earlier commit whose answer was lost is found: it answers what was done. 0 (the
   * default): nothing is settled, the last failure is the outcome.
   */
  settleMs?: number;
  /** The longest delay between attempts while settling. */
  maxDelayMs?: number;
  /** Stops waiting (and retrying) when the call is abandoned. */
  signal?: AbortSignal;
  /** Called before each retry, e.g. to log it. */
  onRetry?: (attempt: number, failure: Failure) => void;
}

export const DEFAULT_RETRIES = 2;
export const DEFAULT_RETRY_DELAY_MS = 2_000;
/** Default of {@link RetryOptions}.maxDelayMs. */
export const DEFAULT_MAX_DELAY_MS = 8_000;

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

/**
 * Whether a failure leaves what a write did unknown: a transient database failure, after which a
 * statement may have committed with only its answer lost. A provider's failure is the provider's
 * answer, not such a silence.
 */
export function leavesWriteUnknown(failure: Failure): boolean {
  return isTransient(failure) && failure.error.code === 'DATABASE_ERROR';
}

/**
 * Runs `attempt` until it succeeds, fails for good, or runs out of retries (and, with `settleMs`,
 * out of time to settle a write).
 *
 * @example
 * const { outcome, attempts } = await withRetries(() => execute(tool, input, context), { signal, settleMs: 40_000 });
 */
export async function withRetries<T>(
  attempt: (attemptNumber: number) => Promise<Outcome<T>>,
  {
    retries = DEFAULT_RETRIES,
    delayMs = DEFAULT_RETRY_DELAY_MS,
    settleMs = 0,
    maxDelayMs = DEFAULT_MAX_DELAY_MS,
    signal,
    onRetry,
  }: RetryOptions = {},
): Promise<{ outcome: Outcome<T>; attempts: number }> {
  let delay = delayMs;
  let settleUntil: number | undefined;
  for (let attemptNumber = 1; ; attemptNumber++) {
    const outcome = await attempt(attemptNumber);
    if (outcome.ok || !isTransient(outcome) || signal?.aborted) return { outcome, attempts: attemptNumber };
    if (attemptNumber > retries) {
      if (!leavesWriteUnknown(outcome)) return { outcome, attempts: attemptNumber };
      settleUntil ??= Date.now() + settleMs;
      delay = Math.min(delay * 2, maxDelayMs, settleUntil - Date.now());
      if (delay <= 0) return { outcome, attempts: attemptNumber };
    }
    onRetry?.(attemptNumber + 1, outcome);
    if (!(await sleep(delay, signal))) return { outcome, attempts: attemptNumber };
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
