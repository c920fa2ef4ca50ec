/** The judge of the docs' JSON answers reads an example as the docs say it is read. */
import { describe, expect, test } from 'vitest';
import { shapeMismatches } from './json-shape.ts';

describe('shapeMismatches', () => {
  test('"…" stands for any value, and for any text between the parts of a string', () => {
    expect(shapeMismatches('…', { any: 1 })).toEqual([]);
    expect(shapeMismatches('5f0c…', '5f0c-1234')).toEqual([]);
    expect(shapeMismatches('Logged … at …Z', 'Logged mood at 2025-10-05T14:30:00Z')).toEqual([]);
    expect(shapeMismatches('5f0c…', 'abcd')).toHaveLength(1);
    expect(shapeMismatches('a…a', 'a')).toHaveLength(1);
    expect(shapeMismatches('x…', 3)).toHaveLength(1);
  });

  test('an object has exactly the keys shown, unless "…" is one of them', () => {
    expect(shapeMismatches({ plans: [] }, { plan_items: [] })).toEqual([
      '$.plans: shown in the example, missing from the answer',
      '$.plan_items: in the answer, not shown in the example (add it, or "…": "…")',
    ]);
    expect(shapeMismatches({ a: 1, '…': '…' }, { a: 2, b: 3 })).toEqual([]);
    expect(shapeMismatches({ a: 1 }, [1])).toHaveLength(1);
  });

  test('an array has exactly the items shown, unless the last is "…"', () => {
    expect(shapeMismatches([1, '…'], [1, 2, 3])).toEqual([]);
    expect(shapeMismatches([1, '…'], [])).toHaveLength(1);
    expect(shapeMismatches([1, 2], [1])).toHaveLength(1);
    expect(shapeMismatches([{ code: 'too_big' }], [{ code: 'too_small' }])).toEqual([
      '$[0].code: expected "too_big", received "too_small"',
    ]);
  });

  test('numbers match any number; text, booleans and null only themselves', () => {
    expect(shapeMismatches(6.1, 0.4)).toEqual([]);
    expect(shapeMismatches(6.1, '6.1')).toHaveLength(1);
    expect(shapeMismatches(true, false)).toHaveLength(1);
    expect(shapeMismatches(null, 0)).toHaveLength(1);
    expect(shapeMismatches('VALIDATION_ERROR', 'NOT_FOUND')).toHaveLength(1);
  });
});
