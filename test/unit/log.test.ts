import { DrizzleQueryError } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { errorForLog } from '../../shared/core/log.ts';

describe('errorForLog', () => {
  it("gives a failed query's database message and code, never its SQL or parameters", () => {
    const database = Object.assign(new Error('duplicate key value violates unique constraint "mood_entries_user_timestamp_unique"'), { name: 'NeonDbError', code: '23505' });
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
