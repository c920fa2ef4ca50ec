/**
 * sortsBetween: the prefix regular expression of a range of calendar dates matches exactly the dates
 * whose text sorts within the range (fixed-width YYYY-MM-DD, so text order is date order), judged
 * by comparing the texts, on every day of three years and bounds at every kind of edge.
 */
import { describe, expect, it } from 'vitest';
import { sortsBetween } from '../../shared/core/date-range.ts';

/** Every calendar day from `from` to `to` (inclusive), as YYYY-MM-DD. */
function days(from: string, to: string): string[] {
  const out: string[] = [];
  for (let at = Date.parse(`${from}T00:00:00Z`); at <= Date.parse(`${to}T00:00:00Z`); at += 86_400_000)
    out.push(new Date(at).toISOString().slice(0, 10));
  return out;
}

describe('sortsBetween', () => {
  const values = days('2029-01-01', '2031-12-31');
  // Edges of every kind: first and last days of months and years, days ending in 0 and 1, tens of months.
  const bounds = [
    '2029-01-01',
    '2029-01-10',
    '2029-01-11',
    '2029-02-28',
    '2029-09-30',
    '2029-10-01',
    '2029-12-31',
    '2030-01-01',
    '2030-01-09',
    '2030-01-20',
    '2030-01-21',
    '2030-06-15',
    '2030-10-10',
    '2030-11-30',
    '2031-01-01',
    '2031-12-31',
  ];

  it('matches exactly the dates within each range, bounds included', () => {
    for (const from of bounds) {
      for (const to of bounds.filter((bound) => bound >= from)) {
        const range = new RegExp(`^${sortsBetween(from, to)}`);
        const wrong = values.filter((value) => range.test(value) !== (value >= from && value <= to));
        expect(wrong.slice(0, 3), `${from} to ${to}: ${range.source}`).toEqual([]);
      }
    }
  });

  it('says whole years in one character class', () => {
    expect(sortsBetween('1000-01-01', '8999-12-31')).toBe('[1-8]');
    expect(sortsBetween('1000-01-01', '9999-12-31')).toBe('[1-9]');
    expect(sortsBetween('1900-01-01', '8999-12-31')).toBe('(?:19|[2-8])');
  });
});
