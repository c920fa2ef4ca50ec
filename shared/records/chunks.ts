/**
 * How a long document is cut into overlapping chunks of fixed length, so that one answer never
 * carries a whole document: get-document-context and `GET /documents/:id` answer one chunk, read
 * with Postgres' `substr` (nothing longer leaves the database).
 *
 * Characters are Unicode code points, which is what Postgres' `char_length` and `substr` count in a
 * UTF-8 database: a chunk never splits a surrogate pair, and lengths and overlaps are exact for any
 * text. (Grapheme clusters made of several code points, such as flag or ZWJ emoji, can straddle a
 * boundary; the overlap repeats them.)
 */

export interface ChunkOptions {
  /** Characters per chunk, an integer >= 1. Default 50_000. */
  chunkSize?: number;
  /** Characters each chunk repeats from the end of the previous one, an integer in [0, chunkSize). Default 200. */
  overlap?: number;
}

/** The defaults of {@link ChunkOptions}. */
export const CHUNK_DEFAULTS = { chunkSize: 50_000, overlap: 200 } as const satisfies Required<ChunkOptions>;

/** Characters [start, end) of a document, 0-based code points. */
export interface Span {
  start: number;
  end: number;
}

export interface ChunkLayout {
  /** At least 1: an empty document is one empty chunk. */
  totalChunks: number;
  /** The document's length in code points. */
  totalCharacters: number;
  /** Where chunk n (1-based) lies; throws RangeError unless n is an integer in [1, totalChunks]. */
  span(n: number): Span;
}

/**
 * The chunks of a document of `totalCharacters` characters. A document of at most chunkSize
 * characters is a single chunk. Otherwise chunk k (1-based) covers characters
 * [(k − 1)·step, (k − 1)·step + chunkSize) with step = chunkSize − overlap, cut at the end of the
 * document: every chunk but the last has exactly chunkSize characters, adjacent chunks share exactly
 * `overlap` characters, and the last chunk is the first one that reaches the end, so it always adds
 * characters the previous one lacks. Chunk 1 followed by each later chunk minus its first `overlap`
 * characters is the document.
 */
export function chunkLayout(totalCharacters: number, options: ChunkOptions = {}): ChunkLayout {
  const { chunkSize, overlap } = resolveOptions(options);
  if (!Number.isInteger(totalCharacters) || totalCharacters < 0)
    throw new RangeError(`totalCharacters must be an integer >= 0, got ${totalCharacters}`);
  const totalChunks = totalCharacters <= chunkSize ? 1 : Math.ceil((totalCharacters - chunkSize) / (chunkSize - overlap)) + 1;
  return {
    totalChunks,
    totalCharacters,
    span(n) {
      if (!Number.isInteger(n) || n < 1 || n > totalChunks)
        throw new RangeError(`chunk must be an integer from 1 to ${totalChunks}, got ${n}`);
      const { start, end } = chunkWindow(n, options);
      return { start, end: Math.min(end, totalCharacters) };
    },
  };
}

/**
 * Where chunk n (an integer >= 1) lies in any document long enough to have it: where a chunk starts
 * does not depend on the document's length, so one window serves several documents in one query.
 */
export function chunkWindow(n: number, options: ChunkOptions = {}): Span {
  const { chunkSize, overlap } = resolveOptions(options);
  const start = (n - 1) * (chunkSize - overlap);
  return { start, end: start + chunkSize };
}

/**
 * The first chunk that holds character `offset` (0-based): chunks overlap, so a character in the
 * overlap is in the next chunk too.
 */
export function chunkOf(offset: number, options: ChunkOptions = {}): number {
  const { chunkSize, overlap } = resolveOptions(options);
  return offset < chunkSize ? 1 : Math.floor((offset - chunkSize) / (chunkSize - overlap)) + 2;
}

function resolveOptions(options: ChunkOptions): Required<ChunkOptions> {
  const chunkSize = options.chunkSize ?? CHUNK_DEFAULTS.chunkSize;
  const overlap = options.overlap ?? CHUNK_DEFAULTS.overlap;
  if (!Number.isInteger(chunkSize) || chunkSize < 1) throw new RangeError(`chunkSize must be an integer >= 1, got ${chunkSize}`);
  if (!Number.isInteger(overlap) || overlap < 0 || overlap >= chunkSize) {
    throw new RangeError(`overlap must be an integer from 0 to chunkSize - 1 (${chunkSize - 1}), got ${overlap}`);
  }
  return { chunkSize, overlap };
}
