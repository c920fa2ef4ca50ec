/**
 * The result's JSON cut to the answer budget in one pass: valid JSON always, within the budget,
 * the same value when it fits, a marker wherever something was cut, deep nesting replaced; and
 * fast on the shapes that froze the gateway when results were walked on its stack.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CUT_MARKER, cutJson, nestsDeeperThan, TOO_DEEP_MARKER } from '../../shared/codemode/cut-json.ts';

const depthOf = (value: unknown): number => {
  // A test's own referee: recursion is fine for the small values fast-check makes.
  if (typeof value !== 'object' || value === null) return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
};

const kept = (text: string, options: { maxChars: number; maxDepth?: number; complete?: boolean }) => {
  const cut = cutJson(text, { maxDepth: 64, complete: true, ...options });
  if (!cut.ok) throw new Error(cut.problem);
  return cut;
};

describe('cutJson', () => {
  it('keeps a value that fits as it is, and cuts one that does not with a marker, closing what is open', () => {
    expect(kept('[1,2,3,4,5,6]', { maxChars: 100 })).toEqual({ ok: true, json: '[1,2,3,4,5,6]', cut: false, tooDeep: false });
    const array = kept(JSON.stringify(Array.from({ length: 50 }, (_, i) => i)), { maxChars: 60 });
    expect(JSON.parse(array.json)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, CUT_MARKER]);
    expect(array.cut).toBe(true);
    const object = kept(JSON.stringify({ a: 1, b: { c: 'x'.repeat(500) } }), { maxChars: 80 });
    expect(JSON.parse(object.json)).toEqual({ a: 1, b: { c: CUT_MARKER } });
    const long = kept(JSON.stringify({ text: 'y'.repeat(500) }), { maxChars: 120 });
    expect(JSON.parse(long.json).text).toMatch(new RegExp(`^y+ ${CUT_MARKER}$`));
  });

  it('replaces containers deeper than the bound, and says so', () => {
    const cut = kept('{"a":1,"b":[1,2,[3,[4]]]}', { maxChars: 100, maxDepth: 3 });
    expect(JSON.parse(cut.json)).toEqual({ a: 1, b: [1, 2, [3, TOO_DEEP_MARKER]] });
    expect(cut).toMatchObject({ cut: true, tooDeep: true });
  });

  it('treats the end of a partial text as a cut, wherever it falls', () => {
    const partial = (text: string) => JSON.parse(kept(text, { maxChars: 200, complete: false }).json) as unknown;
    expect(partial('[1,2,12345')).toEqual([1, 2, CUT_MARKER]);
    expect(partial('{"a":1,"bb')).toEqual({ a: 1, [CUT_MARKER]: null });
    expect(partial('{"a":1,"bb":')).toEqual({ a: 1, bb: CUT_MARKER });
    expect(partial('{"a":1,"bb"')).toEqual({ a: 1, bb: CUT_MARKER });
    expect(partial('{"a":1')).toEqual({ a: CUT_MARKER });
    expect(partial('[[1],')).toEqual([[1], CUT_MARKER]);
    expect(partial(`{"a":"${'q'.repeat(300)}`)).toEqual({ a: expect.stringMatching(new RegExp(`^q+ ${CUT_MARKER}$`)) });
    expect(partial('"abc\\')).toBe(`abc ${CUT_MARKER}`);
  });

  it('refuses what is not JSON, naming where', () => {
    for (const text of ['[1,]', '{"a" 1}', '[1] x', '"abc', '{"a":1', 'nul', '[1 2]', '{1:2}', '']) {
      const cut = cutJson(text, { maxChars: 100, maxDepth: 64, complete: true });
      expect(cut.ok, text).toBe(false);
    }
  });

  it('always answers valid JSON within the budget; the same value when it fits and is shallow enough', () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 6 }),
        fc.integer({ min: 40, max: 400 }),
        fc.integer({ min: 1, max: 6 }),
        (value, maxChars, maxDepth) => {
          const text = JSON.stringify(value);
          const cut = kept(text, { maxChars, maxDepth });
          expect(() => JSON.parse(cut.json)).not.toThrow();
          expect(cut.json.length).toBeLessThanOrEqual(Math.max(maxChars, 2 * maxDepth + CUT_MARKER.length + 40));
          if (text.length <= maxChars - 2 * maxDepth - CUT_MARKER.length - 10 && depthOf(value) <= maxDepth) {
            expect(cut.cut).toBe(false);
            expect(JSON.parse(cut.json)).toEqual(JSON.parse(text));
          }
          // Any start of the text is the start of JSON: cut, never refused.
          const start = text.slice(0, Math.floor(text.length / 2));
          if (start) expect(cutJson(start, { maxChars, maxDepth, complete: false }).ok).toBe(true);
        },
      ),
    );
  });

  it('reads a result 100,000 levels deep or of 200,000 keys quickly, without recursion', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const cutDeep = kept(deep, { maxChars: 24_000 });
    expect(cutDeep.tooDeep).toBe(true);
    expect(cutDeep.json.length).toBeLessThan(200);
    const wide = JSON.stringify(Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, i])));
    const cutWide = kept(wide.slice(0, 48_000), { maxChars: 24_000, complete: false });
    expect(cutWide.json.length).toBeLessThanOrEqual(24_000);
    expect(Object.keys(JSON.parse(cutWide.json)).length).toBeGreaterThan(1_000);
  });
});

describe('nestsDeeperThan', () => {
  it('counts nesting on the text, skipping strings', () => {
    expect(nestsDeeperThan('{"a":[{"b":1}]}', 3)).toBe(false);
    expect(nestsDeeperThan('{"a":[{"b":[1]}]}', 3)).toBe(true);
    expect(nestsDeeperThan('{"a":"[[[[[[[[\\"[[[["}', 1)).toBe(false);
    expect(nestsDeeperThan('['.repeat(1_000_000), 3)).toBe(true);
  });
});
