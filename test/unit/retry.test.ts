import { afterEach, describe, expect, it, vi } from 'vitest';
import { fail, ok, type Failure, type Outcome } from '../../shared/core/contract.ts';
import { isTransient, leavesWriteUnknown, withRetries, type RetryOptions } from '../../shared/runtime/retry.ts';

const transient = fail('DATABASE_ERROR', 'down', { retryable: true, status: 503 });
const permanent = fail('DATABASE_ERROR', 'constraint', { retryable: false });
const upstream = fail('UPSTREAM_ERROR', '503 from the provider', { retryable: true });

describe('withRetries', () => {
  it('retries a transient failure twice, then gives up with 3 attempts', async () => {
    const attempt = vi.fn(async () => transient);
    const retried: number[] = [];
    const result = await withRetries(attempt, { delayMs: 1, onRetry: (n) => retried.push(n) });
    expect(result).toEqual({ outcome: transient, attempts: 3 });
    expect(attempt).toHaveBeenCalledTimes(3);
    expect(retried).toEqual([2, 3]);
  });

  it('returns the first success', async () => {
    const outcomes = [transient, ok(1, 'one')];
    const result = await withRetries(async () => outcomes.shift()!, { delayMs: 1 });
    expect(result).toEqual({ outcome: ok(1, 'one'), attempts: 2 });
  });

  it.each<[string, Failure]>([
    ['a non-retryable database error', permanent],
    ['DOCUMENT_DELETED', fail('DOCUMENT_DELETED', 'gone', { retryable: true })],
    ['CONFLICT', fail('CONFLICT', 'dup')],
    ['VALIDATION_ERROR', fail('VALIDATION_ERROR', 'bad')],
    ['UNKNOWN_ERROR', fail('UNKNOWN_ERROR', 'bug')],
  ])('attempts %s exactly once', async (_case, failure) => {
    const attempt = vi.fn(async () => failure);
    expect(await withRetries(attempt, { delayMs: 1 })).toEqual({ outcome: failure, attempts: 1 });
  });

  it('stops waiting when the call is abandoned', async () => {
    const controller = new AbortController();
    const attempt = vi.fn(async () => {
      controller.abort();
      return transient;
    });
    expect(await withRetries(attempt, { delayMs: 60_000, signal: controller.signal })).toEqual({ outcome: transient, attempts: 1 });
  });

  it('classifies provider failures marked retryable as transient', () => {
    expect(isTransient(fail('UPSTREAM_ERROR', '429', { retryable: true }))).toBe(true);
    expect(isTransient(fail('UPSTREAM_ERROR', 'garbage', { retryable: false }))).toBe(false);
  });
});

/**
 * Runs withRetries on the fake clock: each attempt answers the next of `outcomes` (the last one for
 * ever after), and records when it ran, in ms since the first.
 */
async function onFakeClock(outcomes: Outcome<number>[], options: RetryOptions) {
  vi.useFakeTimers();
  const startedAt = Date.now();
  const ranAt: number[] = [];
  const result = withRetries(async () => {
    ranAt.push(Date.now() - startedAt);
    return outcomes[Math.min(ranAt.length, outcomes.length) - 1]!;
  }, options);
  await vi.runAllTimersAsync();
  return { ...(await result), ranAt };
}

describe('withRetries settling a write (settleMs)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('keeps running the attempt past its retries while the database does not answer, the delay doubling up to its cap, until it answers', async () => {
    const retried: number[] = [];
    const { outcome, attempts, ranAt } = await onFakeClock(
      [transient, transient, transient, transient, transient, transient, ok(1, 'written')],
      {
        delayMs: 2_000,
        settleMs: 40_000,
        maxDelayMs: 8_000,
        onRetry: (attempt) => retried.push(attempt),
      },
    );
    expect(outcome).toEqual(ok(1, 'written'));
    expect(attempts).toBe(7);
    // Two plain retries 2 s apart, then 4 s, 8 s, 8 s, 8 s.
    expect(ranAt).toEqual([0, 2_000, 4_000, 8_000, 16_000, 24_000, 32_000]);
    expect(retried).toEqual([2, 3, 4, 5, 6, 7]);
  });

  it('stops at the ceiling, the last delay shortened to end there, and answers the last failure', async () => {
    const { outcome, attempts, ranAt } = await onFakeClock([transient], { delayMs: 2_000, settleMs: 20_000, maxDelayMs: 8_000 });
    expect(outcome).toBe(transient);
    // The retries end at 4 s; settling runs until 24 s: 8 s, 16 s, then 24 s (8 s), and no further.
    expect(ranAt).toEqual([0, 2_000, 4_000, 8_000, 16_000, 24_000]);
    expect(attempts).toBe(6);
  });

  it('answers the first definitive failure while settling', async () => {
    const { outcome, attempts } = await onFakeClock([transient, transient, transient, transient, permanent], {
      delayMs: 10,
      settleMs: 60_000,
    });
    expect(outcome).toBe(permanent);
    expect(attempts).toBe(5);
  });

  it("settles only the database's silence: a provider's transient failure ends with the retries", async () => {
    const { outcome, attempts } = await onFakeClock([upstream], { delayMs: 10, settleMs: 60_000 });
    expect(outcome).toBe(upstream);
    expect(attempts).toBe(3);
    expect(leavesWriteUnknown(transient)).toBe(true);
    expect(leavesWriteUnknown(upstream)).toBe(false);
    expect(leavesWriteUnknown(permanent)).toBe(false);
  });

  it('settles nothing by default: reads keep the plain retries', async () => {
    const { attempts, ranAt } = await onFakeClock([transient], { delayMs: 2_000 });
    expect(attempts).toBe(3);
    expect(ranAt).toEqual([0, 2_000, 4_000]);
  });

  it('stops settling when the call is abandoned', async () => {
    const controller = new AbortController();
    let ran = 0;
    vi.useFakeTimers();
    const result = withRetries(
      async () => {
        if (++ran === 5) controller.abort();
        return transient;
      },
      { delayMs: 1_000, settleMs: 600_000, signal: controller.signal },
    );
    await vi.runAllTimersAsync();
    expect(await result).toEqual({ outcome: transient, attempts: 5 });
  });
});
