/** The one place answers are built: status, envelope, and Retry-After on every 429 and 503. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_AFTER_MS, fail, metaWithoutExecution, notFound, ok, type Failure } from '../../shared/core/contract.ts';
import { plural } from '../../shared/core/plural.ts';
import { respond } from '../../shared/http/base.ts';

const meta = metaWithoutExecution('test', 'trace');

describe('respond', () => {
  it.each<[string, Failure, number, string, number]>([
    ['RATE_LIMITED with its own wait', fail('RATE_LIMITED', 'slow down', { details: { retry_after_ms: 1_500 } }), 429, '2', 1_500],
    ['BUSY with its own wait', fail('BUSY', 'busy', { details: { reason: 'timeout', retry_after_ms: 250 } }), 503, '1', 250],
    ['BUSY with a wait of 0', fail('BUSY', 'busy', { details: { retry_after_ms: 0 } }), 503, '0', 0],
    [
      'a transient DATABASE_ERROR, which names no wait',
      fail('DATABASE_ERROR', 'down', { retryable: true, status: 503 }),
      503,
      String(DEFAULT_RETRY_AFTER_MS / 1000),
      DEFAULT_RETRY_AFTER_MS,
    ],
  ])('sets Retry-After on %s, matching details.retry_after_ms', async (_case, failure, status, header, waitMs) => {
    const response = respond(failure, meta);
    expect(response.status).toBe(status);
    expect(response.headers.get('retry-after')).toBe(header);
    const body = (await response.json()) as { error: { details: { retry_after_ms: number } } };
    expect(body.error.details.retry_after_ms).toBe(waitMs);
    expect(Math.ceil(body.error.details.retry_after_ms / 1000)).toBe(Number(response.headers.get('retry-after')));
  });

  it('sets no Retry-After on other statuses', () => {
    expect(respond(fail('VALIDATION_ERROR', 'bad'), meta).headers.get('retry-after')).toBeNull();
    expect(respond(fail('DATABASE_ERROR', 'constraint'), meta).headers.get('retry-after')).toBeNull();
    expect(respond(ok({}, 'fine'), meta).headers.get('retry-after')).toBeNull();
  });
});

describe('notFound', () => {
  it('names one id, or several, in the same words for every entity', () => {
    expect(notFound('document', { document_id: 'd1' })).toMatchObject({
      error: {
        code: 'NOT_FOUND',
        message: "No document with id 'd1' exists in this project.",
        details: { entity_type: 'document', query: { document_id: 'd1' } },
      },
    });
    expect(notFound('task', { task_ids: ['a', 'b'] }).error.message).toBe("No tasks with ids 'a', 'b' exist in this project.");
  });

  it('names at most ten ids in the message and keeps them all in details', () => {
    const ids = Array.from({ length: 12 }, (_, i) => `t${i}`);
    const failure = notFound('task', { task_ids: ids });
    expect(failure.error.message).toContain("'t9' and 2 more");
    expect(failure.error.details?.query).toEqual({ task_ids: ids });
  });
});

describe('plural', () => {
  it('is singular for exactly one', () => {
    expect([0, 1, 2].map((n) => plural(n, 'item'))).toEqual(['0 items', '1 item', '2 items']);
    expect(plural(2, 'match', 'matches')).toBe('2 matches');
  });
});
