import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkLayout, chunkOf, type ChunkOptions } from '../../shared/records/chunks.ts';

const points = (s: string) => [...s];

/** The chunks of `content` cut where the layout says, by code points (what Postgres' substr does). */
function chunks(content: string, options: ChunkOptions = {}): string[] {
  const all = points(content);
  const layout = chunkLayout(all.length, options);
  return Array.from({ length: layout.totalChunks }, (_, i) => {
    const { start, end } = layout.span(i + 1);
    return all.slice(start, end).join('');
  });
}

/** Chunk 1, then every later chunk minus its first `overlap` code points. */
function reassemble(parts: string[], overlap: number): string {
  return parts.map((part, i) => (i === 0 ? part : points(part).slice(overlap).join(''))).join('');
}

/** Every property the module promises, for one document and one setting. */
function expectChunked(content: string, chunkSize: number, overlap: number): void {
  const parts = chunks(content, { chunkSize, overlap });
  const length = points(content).length;
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
  });
}

describe('chunkLayout', () => {
  it('uses 50,000 characters with a 200-character overlap by default', () => {
    expect(chunkLayout(50_000).totalChunks).toBe(1);
    const longer = chunkLayout(100_000);
    expect(longer.totalChunks).toBe(3);
    expect(longer.span(1)).toEqual({ start: 0, end: 50_000 });
    expect(longer.span(2)).toEqual({ start: 49_800, end: 99_800 });
    expect(longer.span(3)).toEqual({ start: 99_600, end: 100_000 });
  });

  it('makes one empty chunk of an empty document', () => {
    const layout = chunkLayout(0, { chunkSize: 10, overlap: 2 });
    expect(layout.totalChunks).toBe(1);
    expect(layout.span(1)).toEqual({ start: 0, end: 0 });
  });

  it.each([
    ['exactly chunkSize', 10, 1],
    ['chunkSize + 1', 11, 2],
    ['2·chunkSize − overlap (two full chunks)', 17, 2],
    ['2·chunkSize − overlap + 1', 18, 3],
  ])('handles a document of %s characters', (_label, length, expected) => {
    const content = Array.from({ length }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    expect(chunkLayout(length, { chunkSize: 10, overlap: 3 }).totalChunks).toBe(expected);
    expectChunked(content, 10, 3);
  });

  it('gives the exact chunks of a small example', () => {
    expect(chunks('abcdefghij', { chunkSize: 4, overlap: 1 })).toEqual(['abcd', 'defg', 'ghij']);
    expect(chunks('abcdefghijk', { chunkSize: 4, overlap: 1 })).toEqual(['abcd', 'defg', 'ghij', 'jk']);
    expect(chunks('abcdefgh', { chunkSize: 4, overlap: 0 })).toEqual(['abcd', 'efgh']);
  });

  it('counts code points, so emoji at the boundaries are never split', () => {
    expect(chunks('😀😁😂🤣😃😄😅😆😉😊', { chunkSize: 4, overlap: 1 })).toEqual(['😀😁😂🤣', '🤣😃😄😅', '😅😆😉😊']);
    expectChunked('ab😀cd😁ef', 3, 1);
    expectChunked('😀'.repeat(7), 3, 2);
  });

  it('finds the first chunk holding a character (property, against every span)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3_000 }),
        fc.integer({ min: 2, max: 300 }),
        fc.integer({ min: 0, max: 99 }),
        (offset, chunkSize, share) => {
          const options = { chunkSize, overlap: Math.floor((chunkSize - 1) * (share / 100)) };
          const layout = chunkLayout(offset + 1, options);
          const holding = Array.from({ length: layout.totalChunks }, (_, i) => i + 1).filter((n) => {
            const { start, end } = layout.span(n);
            return start <= offset && offset < end;
          });
          expect(chunkOf(offset, options)).toBe(holding[0]);
        },
      ),
      { numRuns: 1_000, seed: 3 },
    );
  });

  it('rejects invalid options, lengths and chunk numbers', () => {
    expect(() => chunkLayout(3, { chunkSize: 0 })).toThrow(RangeError);
    expect(() => chunkLayout(3, { chunkSize: 2.5 })).toThrow(RangeError);
    expect(() => chunkLayout(3, { chunkSize: 5, overlap: 5 })).toThrow(/overlap/);
    expect(() => chunkLayout(3, { chunkSize: 5, overlap: -1 })).toThrow(/overlap/);
    expect(() => chunkLayout(-1)).toThrow(RangeError);
    const layout = chunkLayout(6, { chunkSize: 4, overlap: 1 });
    expect(() => layout.span(0)).toThrow(RangeError);
    expect(() => layout.span(3)).toThrow(/from 1 to 2/);
    expect(() => layout.span(1.5)).toThrow(RangeError);
  });

  it('satisfies every promise for arbitrary text, sizes and overlaps (property)', () => {
    const text = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.string({ unit: 'grapheme', maxLength: 80 }),
      fc.string({ unit: 'binary', maxLength: 120 }),
    );
    const settings = fc
      .integer({ min: 1, max: 40 })
      .chain((chunkSize) => fc.tuple(fc.constant(chunkSize), fc.integer({ min: 0, max: chunkSize - 1 })));
    fc.assert(
      fc.property(text, settings, (content, [chunkSize, overlap]) => expectChunked(content, chunkSize, overlap)),
      { numRuns: 2_000, seed: 42 },
    );
  });

  it('covers every character and ends each chunk but the last at chunkSize (property, larger documents)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5_000 }),
        fc.integer({ min: 2, max: 700 }),
        fc.integer({ min: 0, max: 1 }),
        (length, chunkSize, emoji) => {
          const content = emoji ? '🙂x'.repeat(length >> 1) : 'y'.repeat(length);
          expectChunked(content, chunkSize, chunkSize >> 2);
        },
      ),
      { numRuns: 200, seed: 1 },
    );
  });
});
