import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { paginate, type Pagination } from '../../functions/task-analysis/lib/pagination.ts';

function chunks(p: Pagination): string[] {
  return Array.from({ length: p.totalChunks }, (_, i) => p.chunk(i + 1));
}

/** Chunk 1, then every later chunk minus its first `overlap` code points. */
function reassemble(parts: string[], overlap: number): string {
  return parts.map((part, i) => (i === 0 ? part : [...part].slice(overlap).join(''))).join('');
}

const points = (s: string) => [...s];

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Every property the module promises, for one document and one setting. */
function expectPaginated(content: string, chunkSize: number, overlap: number): void {
  const p = paginate(content, { chunkSize, overlap });
  const parts = chunks(p);
  const length = points(content).length;
  expect(p.totalCharacters).toBe(length);
  expect(reassemble(parts, overlap)).toBe(content);
  if (length <= chunkSize) {
    expect(parts).toEqual([content]);
    return;
  }
  parts.forEach((part, i) => {
    const size = points(part).length;
    if (i < parts.length - 1) expect(size).toBe(chunkSize);
    else expect(size).toBeGreaterThan(overlap);
    if (i > 0) {
      const previous = points(parts[i - 1]!);
      expect(previous.slice(previous.length - overlap).join('')).toBe(points(part).slice(0, overlap).join(''));
    }
    // A boundary never splits a surrogate pair: lone surrogates appear only if the document has them.
    if (!LONE_SURROGATE.test(content)) expect(part).not.toMatch(LONE_SURROGATE);
  });
}

describe('paginate', () => {
  it('uses 50,000 characters with a 200-character overlap by default', () => {
    const content = 'a'.repeat(50_000);
    expect(paginate(content).totalChunks).toBe(1);
    const longer = paginate('x'.repeat(100_000));
    expect(longer.totalChunks).toBe(3);
    expect(longer.chunk(1)).toHaveLength(50_000);
    expect(longer.chunk(3)).toHaveLength(100_000 - 2 * 49_800);
  });

  it('returns one empty chunk for an empty document', () => {
    const p = paginate('', { chunkSize: 10, overlap: 2 });
    expect(p.totalChunks).toBe(1);
    expect(p.totalCharacters).toBe(0);
    expect(p.chunk(1)).toBe('');
  });

  it.each([
    ['exactly chunkSize', 10, 1],
    ['chunkSize + 1', 11, 2],
    ['2·chunkSize − overlap (two full chunks)', 17, 2],
    ['2·chunkSize − overlap + 1', 18, 3],
  ])('handles a document of %s characters', (_label, length, expected) => {
    const content = Array.from({ length }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    const p = paginate(content, { chunkSize: 10, overlap: 3 });
    expect(p.totalChunks).toBe(expected);
    expectPaginated(content, 10, 3);
  });

  it('gives the exact chunks of a small example', () => {
    const p = paginate('abcdefghij', { chunkSize: 4, overlap: 1 });
    expect(chunks(p)).toEqual(['abcd', 'defg', 'ghij']);
    expect(chunks(paginate('abcdefghijk', { chunkSize: 4, overlap: 1 }))).toEqual(['abcd', 'defg', 'ghij', 'jk']);
    expect(chunks(paginate('abcdefgh', { chunkSize: 4, overlap: 0 }))).toEqual(['abcd', 'efgh']);
  });

  it('counts code points, so emoji at the boundaries are never split', () => {
    const content = '😀😁😂🤣😃😄😅😆😉😊';
    const p = paginate(content, { chunkSize: 4, overlap: 1 });
    expect(p.totalCharacters).toBe(10);
    expect(chunks(p)).toEqual(['😀😁😂🤣', '🤣😃😄😅', '😅😆😉😊']);
    expectPaginated('ab😀cd😁ef', 3, 1);
    expectPaginated('😀'.repeat(7), 3, 2);
  });

  it('counts a lone surrogate as one character', () => {
    const content = 'ab\uD800cd\uDC00e';
    expect(paginate(content, { chunkSize: 3, overlap: 1 }).totalCharacters).toBe(7);
    expectPaginated(content, 3, 1);
  });

  it('rejects invalid options and chunk numbers', () => {
    expect(() => paginate('abc', { chunkSize: 0 })).toThrow(RangeError);
    expect(() => paginate('abc', { chunkSize: 2.5 })).toThrow(RangeError);
    expect(() => paginate('abc', { chunkSize: 5, overlap: 5 })).toThrow(/overlap/);
    expect(() => paginate('abc', { chunkSize: 5, overlap: -1 })).toThrow(/overlap/);
    const p = paginate('abcdef', { chunkSize: 4, overlap: 1 });
    expect(() => p.chunk(0)).toThrow(RangeError);
    expect(() => p.chunk(3)).toThrow(/from 1 to 2/);
    expect(() => p.chunk(1.5)).toThrow(RangeError);
  });

  it('satisfies every promise for arbitrary text, sizes and overlaps (property)', () => {
    const text = fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'grapheme', maxLength: 80 }), fc.string({ unit: 'binary', maxLength: 120 }));
    const settings = fc.integer({ min: 1, max: 40 }).chain((chunkSize) => fc.tuple(fc.constant(chunkSize), fc.integer({ min: 0, max: chunkSize - 1 })));
    fc.assert(
      fc.property(text, settings, (content, [chunkSize, overlap]) => expectPaginated(content, chunkSize, overlap)),
      { numRuns: 2_000, seed: 42 },
    );
  });

  it('covers every character and ends each chunk but the last at chunkSize (property, larger documents)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 2, max: 700 }), fc.integer({ min: 0, max: 1 }), (length, chunkSize, emoji) => {
        const content = emoji ? '🙂x'.repeat(length >> 1) : 'y'.repeat(length);
        expectPaginated(content, chunkSize, chunkSize >> 2);
      }),
      { numRuns: 200, seed: 1 },
    );
  });
});
