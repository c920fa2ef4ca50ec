import { DrizzleQueryError } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { fail } from '../../shared/core/contract.ts';
import { errorForLog } from '../../shared/core/log.ts';
import { logUnsuccessful } from '../../shared/runtime/call-report.ts';

describe('errorForLog', () => {
  it("gives a failed query's database message and code, never its SQL or parameters", () => {
    const database = Object.assign(new Error('duplicate key value violates unique constraint "mood_entries_user_timestamp_unique"'), {
      name: 'NeonDbError',
      code: '23505',
    });
    const error = new DrizzleQueryError('insert into "mood_entries" ("user_id") values ($1)', ['secret-user-id'], database);
    const logged = errorForLog(error);
    expect(logged).toEqual({ name: error.name, message: database.message, code: '23505' });
    expect(JSON.stringify(logged)).not.toMatch(/secret-user-id|insert into/);
  });

  it('keeps any other error short, and survives values that are not errors', () => {
    expect(errorForLog(new TypeError('boom'))).toEqual({ name: 'TypeError', message: 'boom' });
    expect(errorForLog('x'.repeat(1000)).message).toHaveLength(200);
  });
});

describe('logUnsuccessful', () => {
  it('names the record a failure is about, such as the document a DOCUMENT_DELETED lost', () => {
    const lines: string[] = [];
    const warn = vi.spyOn(console, 'warn').mockImplementation((line: string) => void lines.push(line));
    try {
      const failure = fail('DOCUMENT_DELETED', 'Document 3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f was deleted during execution.', {
        details: { entity_type: 'document', document_id: '3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f' },
      });
      logUnsuccessful('call_failed', failure, { trace_id: 't-1', tool: 'get-document-context' });
    } finally {
      warn.mockRestore();
    }
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([
      {
        level: 'warn',
        event: 'call_failed',
        entity_type: 'document',
        document_id: '3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f',
        trace_id: 't-1',
        tool: 'get-document-context',
        code: 'DOCUMENT_DELETED',
        status: 409,
        retryable: false,
      },
    ]);
  });
});
