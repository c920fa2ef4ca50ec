/**
 * The date-times and dates the validator accepts, judged by Postgres itself (PGlite): every one is
 * stored by `timestamptz` / `date` without an error, and as the instant (or day) it names, so an
 * accepted value never becomes a 500 and is never stored as something else.
 */
import { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { DATE_PATTERN, DATE_TIME_PATTERN, dateTime } from '../../shared/core/fields.ts';
import { validateInput } from '../../shared/core/validation.ts';
import { dateTimeLike } from '../support/format-arbitrary.ts';

/** An input with one date-time field, validated as every tool validates one. */
const input = z.strictObject({ at: dateTime() });

let postgres: PGlite;
beforeAll(async () => {
  postgres = await PGlite.create();
  await postgres.exec("set timezone = 'UTC'");
});
afterAll(async () => {
  await postgres.close();
});

/** What Postgres does with `value` cast to `type`: its text form, or the SQLSTATE it refuses it with. */
async function cast(value: string, type: 'timestamptz' | 'date'): Promise<{ stored: string } | { sqlstate: string }> {
  try {
    const { rows } = await postgres.query<{ stored: string }>(`select $1::${type}::text as stored`, [value]);
    return { stored: rows[0]!.stored };
  } catch (error) {
    return { sqlstate: (error as { code: string }).code };
  }
}

/** Milliseconds since the epoch of a UTC timestamp as Postgres writes it ("2025-10-05 14:30:00.123+00", "0001-01-01 00:00:00+00 BC"). */
function epochOf(stored: string): number {
  const [, date, time, bc] = /^(\S+) (\S+?)(?:\+00)( BC)?$/.exec(stored)!;
  const [year, month, day] = date!.split('-').map(Number);
  const [hours, minutes, seconds] = time!.split(':').map(Number);
  const at = new Date(0);
  at.setUTCFullYear(bc ? 1 - year! : year!, month! - 1, day!);
  at.setUTCHours(hours!, minutes!, 0, 0);
  return at.getTime() + Math.round(seconds! * 1000);
}

describe('accepted date-times, judged by Postgres timestamptz', () => {
  it('stores every accepted date-time as the instant it names, to the millisecond', async () => {
    const values = fc.sample(dateTimeLike, { seed: 15, numRuns: 3_000 });
    const accepted = values.filter((value) => DATE_TIME_PATTERN.test(value));
    expect(accepted.length).toBeGreaterThan(1_000);
    for (const value of accepted) {
      const result = await cast(value, 'timestamptz');
      expect(result, value).toHaveProperty('stored');
      if (!('stored' in result)) continue;
      // Postgres rounds fractions to microseconds, JS to milliseconds: compare within a millisecond.
      expect(Math.abs(epochOf(result.stored) - Date.parse(value)), `${value} stored as ${result.stored}`).toBeLessThanOrEqual(1);
    }
  });

  it('stores every accepted date-time as JavaScript writes it back (toISOString), as the same instant', async () => {
    const values = fc.sample(dateTimeLike, { seed: 17, numRuns: 3_000 });
    const accepted = values.filter((value) => validateInput(input, { at: value }, '').ok);
    // Many of them in the first and last accepted years, where an offset moves the instant the most.
    expect(accepted.filter((value) => /^(1000|8999)-/.test(value)).length).toBeGreaterThan(50);
    for (const value of accepted) {
      const written = new Date(value).toISOString();
      const result = await cast(written, 'timestamptz');
      expect(result, `${value} written as ${written}`).toHaveProperty('stored');
      if ('stored' in result) expect(epochOf(result.stored), value).toBe(Date.parse(value));
    }
  });

  it.each([
    ['an offset beyond ±15:59', '2025-10-05T14:30:00-16:00', '22009'],
    ['year 0000', '0000-01-01T00:00:00Z', '22008'],
    ['a day that does not exist', '2025-02-29T00:00:00Z', '22008'],
  ])('refuses what Postgres refuses: %s', async (_case, value, sqlstate) => {
    expect(DATE_TIME_PATTERN.test(value)).toBe(false);
    expect(await cast(value, 'timestamptz')).toEqual({ sqlstate });
  });
});

describe('accepted dates, judged by Postgres date', () => {
  it('stores every accepted date as the same day', async () => {
    const dates = fc.sample(
      dateTimeLike.map((value) => value.slice(0, 10)),
      { seed: 16, numRuns: 2_000 },
    );
    const accepted = [...new Set(dates.filter((value) => DATE_PATTERN.test(value)))];
    expect(accepted.length).toBeGreaterThan(500);
    for (const value of accepted) expect(await cast(value, 'date'), value).toEqual({ stored: value });
  });
});
