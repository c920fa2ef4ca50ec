import { describe, expect, it, vi } from 'vitest';
import { fail, ok, type Failure } from '../../shared/core/contract.ts';
import { isTransient, withRetries } from '../../shared/runtime/retry.ts';

const transient = fail('DATABASE_ERROR', 'down', { retryable: true, status: 503 });
const permanent = fail('DATABASE_ERROR', 'constraint', { retryable: false });

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
