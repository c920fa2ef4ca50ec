import { describe, expect, it } from 'vitest';
import { fitToBudget, jsonLength } from '../../shared/core/budget.ts';

describe('fitToBudget', () => {
  const items = Array.from({ length: 10 }, (_, i) => ({ id: `item-${i}` })); // 15 characters each

  it('keeps the longest prefix whose JSON array fits the budget', () => {
    const page = fitToBudget(items, 50);
    expect(page).toEqual(items.slice(0, 3));
    // Judged by the JSON the agent reads: the page as an array fits, one more item would not.
    expect(jsonLength(page)).toBeLessThanOrEqual(50);
    expect(jsonLength(items.slice(0, 4))).toBeGreaterThan(50);
  });

  it('keeps everything that fits, and at least one item so paging advances', () => {
    expect(fitToBudget(items, 10_000)).toEqual(items);
    expect(fitToBudget([{ text: 'x'.repeat(500) }], 10)).toHaveLength(1);
    expect(fitToBudget(items, 10, { atLeast: 2 })).toHaveLength(2);
    expect(fitToBudget(items, 10, { atLeast: 0 })).toEqual([]);
    expect(fitToBudget([], 10)).toEqual([]);
  });

  it('counts what each item brings along, through size', () => {
    const shared = new Set<string>();
    // Each item costs 10, plus 100 the first time its group appears.
    const size = (item: { group: string }) => 10 + (shared.has(item.group) ? 0 : (shared.add(item.group), 100));
    const grouped = [{ group: 'a' }, { group: 'a' }, { group: 'b' }, { group: 'b' }];
    expect(fitToBudget(grouped, 125, { size })).toHaveLength(2);
  });
});
