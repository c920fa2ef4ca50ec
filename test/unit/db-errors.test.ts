/** The database error classifier, on the driver's and drizzle's own error classes. */
import { NeonDbError } from '@neondatabase/serverless';
import { DrizzleQueryError } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { databaseFailure } from '../../shared/core/database.ts';

function neonError(message: string, fields: Partial<NeonDbError> = {}): NeonDbError {
  return Object.assign(new NeonDbError(message), fields);
}
const viaDrizzle = (cause: Error) => new DrizzleQueryError('insert into t values ($1)', ['secret'], cause);

describe('databaseFailure', () => {
  it.each([
    ['08006 connection failure', '08006', true],
    ['40001 serialization failure', '40001', true],
    ['40P01 deadlock', '40P01', true],
    ['53300 too many connections', '53300', true],
    ['57P01 admin shutdown', '57P01', true],
    ['57P03 cannot connect now', '57P03', true],
    ['23503 foreign key violation', '23503', false],
    ['42601 syntax error', '42601', false],
    ['57014 query canceled', '57014', false],
  ])('%s -> retryable %s', (_case, code, retryable) => {
    const failure = databaseFailure(viaDrizzle(neonError('x', { code })));
    expect(failure?.error).toMatchObject({ code: 'DATABASE_ERROR', retryable });
    expect(failure?.status).toBe(retryable ? 503 : undefined);
  });

  it('treats a network failure (no SQLSTATE) and HTTP 5xx as transient, HTTP 4xx as not', () => {
    expect(databaseFailure(neonError('Error connecting to database: fetch failed'))?.error.retryable).toBe(true);
    expect(databaseFailure(neonError('Server error (HTTP status 503): unavailable'))?.error.retryable).toBe(true);
    expect(databaseFailure(neonError('Server error (HTTP status 401): bad password'))?.error.retryable).toBe(false);
  });

  it("never retries Neon's 507 (a response over its size limit fails the same way every time)", () => {
    const failure = databaseFailure(
      neonError('Server error (HTTP status 507): {"message":"response is too large (max is 10485760 bytes)","code":""}'),
    );
    expect(failure?.error).toMatchObject({ code: 'DATABASE_ERROR', retryable: false, details: { reason: 'response_too_large' } });
    expect(failure?.status).toBeUndefined();
    expect(failure?.error.message).toMatch(/size limit .* ask for less in one call/);
  });

  it('answers CONFLICT with the columns of a unique violation', () => {
    const failure = databaseFailure(
      viaDrizzle(
        neonError('duplicate key', {
          code: '23505',
          constraint: 'mood_unique',
          detail: 'Key (user_id, "timestamp")=(u, 2025) already exists.',
        }),
      ),
    );
    expect(failure?.error).toMatchObject({
      code: 'CONFLICT',
      details: { columns: ['user_id', 'timestamp'], constraint: 'mood_unique', sqlstate: '23505' },
    });
  });

  it('maps missing tables and columns to CONFIG_ERROR', () => {
    expect(databaseFailure(neonError('x', { code: '42P01' }))?.error.details?.reason).toBe('table_not_found');
    expect(databaseFailure(neonError('x', { code: '42703' }))?.error.details?.reason).toBe('column_not_found');
  });

  it('never puts SQL or parameters in the message', () => {
    const failure = databaseFailure(viaDrizzle(neonError('syntax error at "secret"', { code: '42601' })));
    expect(JSON.stringify(failure?.error)).not.toMatch(/secret|insert into/);
  });

  it('tells the agent to apologise briefly and suggest a retry, saying when and how by kind of failure', () => {
    const transient = databaseFailure(neonError('x', { code: '40001' }))!.error;
    expect(transient.message).toBe(
      'The database is temporarily unavailable. Apologise briefly to the user and suggest trying again in a few seconds: the same call may then succeed.',
    );
    expect(transient.hint).toMatch(/^Repeat the same call in a few seconds, with the same Idempotency-Key/);

    const rejected = databaseFailure(viaDrizzle(neonError('x', { code: '23514', constraint: 'mood_entries_energy_level_check' })))!.error;
    expect(rejected.message).toBe(
      'The database rejected the data: it violates constraint mood_entries_energy_level_check. Apologise briefly to the user and suggest trying again with corrected values: the same call unchanged would fail the same way.',
    );
    expect(rejected.hint).toMatch(/ask the user to correct the wrong one/);

    const permanent = databaseFailure(neonError('x', { code: '42501' }))!.error;
    expect(permanent.message).toBe(
      'The database could not complete the operation. Apologise briefly to the user and suggest trying again later: the same call repeated right away would fail the same way.',
    );
    expect(permanent.hint).toMatch(/try again later/);
  });

  it('leaves other errors alone', () => {
    expect(databaseFailure(new TypeError('x'))).toBeUndefined();
  });
});
