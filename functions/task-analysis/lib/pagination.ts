/**
 * Splits a long document into overlapping chunks of fixed length.
 *
 * Characters are Unicode code points (what `[...text]` iterates), not UTF-16 code units: a chunk never
 * splits a surrogate pair, and lengths and overlaps are exact for any text. (Grapheme clusters made of
 * several code points, such as flag or ZWJ emoji, can straddle a boundary; the overlap repeats them.)
 * A lone surrogate counts as one character.
 */

export interface PaginationOptions {
  /** Characters per chunk, an integer >= 1. Default 50_000. */
  chunkSize?: number;
  /** Characters each chunk repeats from the end of the previous one, an integer in [0, chunkSize). Default 200. */
  overlap?: number;
}

/** The defaults of {@link PaginationOptions}. */
export const PAGINATION_DEFAULTS = { chunkSize: 50_000, overlap: 200 } as const satisfies Required<PaginationOptions>;

export interface Pagination {
  /** At least 1: an empty document is one empty chunk. */
  totalChunks: number;
  /** The document's length in code points. */
  totalCharacters: number;
  /** Chunk n, 1-based; throws RangeError unless n is an integer in [1, totalChunks]. */
  chunk(n: number): string;
}

/**
 * Paginates `content`. A document of at most chunkSize characters is a single chunk. Otherwise chunk k
 * (1-based) covers characters [(k − 1)·step, (k − 1)·step + chunkSize) with step = chunkSize − overlap,
 * cut at the end of the document: every chunk but the last has exactly chunkSize characters, adjacent
 * chunks share exactly `overlap` characters, and the last chunk is the first one that reaches the end,
 * so it always adds characters the previous one lacks. Chunk 1 followed by each later chunk minus its
 * first `overlap` characters is the document.
 */
export function paginate(content: string, options: PaginationOptions = {}): Pagination {
  const { chunkSize, overlap } = resolveOptions(options);
  // Without surrogates code points and code units coincide, which spares the walks (the common case).
  const walk = SURROGATE.test(content);
  const length = walk ? codePointLength(content) : content.length;
  const step = chunkSize - overlap;
  const totalChunks = length <= chunkSize ? 1 : Math.ceil((length - chunkSize) / step) + 1;
  const starts = Array.from({ length: totalChunks }, (_, k) => k * step);
  const ends = starts.map((start) => Math.min(start + chunkSize, length));
  const startUnits = walk ? toCodeUnitOffsets(content, starts) : starts;
  const endUnits = walk ? toCodeUnitOffsets(content, ends) : ends;
  return {
    totalChunks,
    totalCharacters: length,
    chunk(n: number): string {
      if (!Number.isInteger(n) || n < 1 || n > totalChunks) throw new RangeError(`chunk must be an integer from 1 to ${totalChunks}, got ${n}`);
      return content.slice(startUnits[n - 1], endUnits[n - 1]);
    },
  };
}

function resolveOptions(options: PaginationOptions): Required<PaginationOptions> {
  const chunkSize = options.chunkSize ?? PAGINATION_DEFAULTS.chunkSize;
  const overlap = options.overlap ?? PAGINATION_DEFAULTS.overlap;
  if (!Number.isInteger(chunkSize) || chunkSize < 1) throw new RangeError(`chunkSize must be an integer >= 1, got ${chunkSize}`);
  if (!Number.isInteger(overlap) || overlap < 0 || overlap >= chunkSize) {
    throw new RangeError(`overlap must be an integer from 0 to chunkSize - 1 (${chunkSize - 1}), got ${overlap}`);
  }
  return { chunkSize, overlap };
}

const SURROGATE = /[\uD800-\uDFFF]/;

function codePointLength(content: string): number {
  let length = 0;
  for (let i = 0; i < content.length; i += unitsAt(content, i)) length++;
  return length;
}

/** 2 for a well-formed surrogate pair starting at i, else 1. */
function unitsAt(content: string, i: number): number {
  return (content.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
}

/** Maps ascending code-point offsets (each at most the length) to code-unit offsets in one walk. */
function toCodeUnitOffsets(content: string, offsets: number[]): number[] {
  const units: number[] = [];
  let unit = 0;
  let point = 0;
  for (const offset of offsets) {
    while (point < offset) {
      unit += unitsAt(content, unit);
      point++;
    }
    units.push(unit);
  }
  return units;
}
