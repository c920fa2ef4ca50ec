/**
 * The offline default embedder: deterministic, no network, no model. A text becomes a bag of
 * features — the Porter2 stems of its content words, and the character trigrams of each stem —
 * hashed into a fixed number of dimensions ("feature hashing", each feature into several
 * dimensions), weighted by sublinear term frequency and L2-normalised.
 *
 * What it captures: shared words, whatever their inflection ("hiring" / "hired" / "hire") and
 * whatever their order; words too common to mean anything (stop words) are left out; a misspelt
 * or unknown word still shares most of its trigrams with the right one. What it cannot capture:
 * synonyms ("hire" / "recruit") and meaning beyond words. Its similarities are lower than a
 * neural model's for the same pair of texts (two four-word texts sharing one word score about
 * 0.25-0.3), which is why it has its own default threshold ({@link HASHING_EMBEDDER_THRESHOLD}).
 */
import { fnv1a } from '../core/fnv1a.ts';
import { addHashed, normalise, trigrams } from './feature-hashing.ts';
import { searchTerms, stemOf, words } from './text.ts';

/** Labels every result that used this embedder. Bump the version whenever the vectors change. */
export const HASHING_EMBEDDER_ID = 'offline-hashing-v2';

/** Default output dimensions (the stored vector size). */
export const HASHING_EMBEDDER_DIMENSIONS = 1536;

/**
 * semantic-search's default threshold with this embedder, measured on the seed corpus by
 * `bench/retrieval.ts` (bench/RESULTS.md): the highest threshold at which 99 % of the query–task
 * pairs sharing exactly one content word (a query of at most 4 content words, a task of at most 10)
 * are still found. Pairs sharing no word (only trigrams of different words, or hash collisions)
 * reach it about once in 3,000.
 */
export const HASHING_EMBEDDER_THRESHOLD = 0.12;

/** A stem counts this much; each of its trigrams far less: they are a fallback for words that differ slightly. */
const STEM_WEIGHT = 1;
const TRIGRAM_WEIGHT = 0.25;
/**
 * Dimensions each feature is spread over. Two texts sharing a feature share all of its dimensions;
 * two different features that collide share one, so a collision weighs a quarter of a real match.
 * With one hash per feature, seed-corpus tasks sharing no word with a query reached 0.3 through
 * collisions alone; with four, 0.17.
 */
const HASHES_PER_FEATURE = 4;

/**
 * Embeds `text` into a `dimensions`-long L2-normalised Float32Array (default 1536).
 *
 * Features, from the words of the text ({@link words}: NFKC, lower case, accents folded):
 * - each content word (not a stop word) as its Porter2 stem, and each code-point trigram of the stem
 *   wrapped in boundary markers ("engin" gives "<en", "eng", "ngi", "gin", "in>");
 * - a text of stop words only ("the", "to do") falls back to those words, and a text without words
 *   ("???", an emoji) to its characters: every text with a non-space character gets a non-zero vector.
 *
 * Each feature is hashed HASHES_PER_FEATURE times (32-bit FNV-1a of the salted feature) to a
 * dimension (hash mod dimensions) and a sign (a bit of the hash's murmur3 finaliser, so collisions
 * cancel on average rather than pile up); each share is weighted by 1 + ln(count) times its kind's
 * weight, over √HASHES_PER_FEATURE. Only a blank text gives the all-zero vector.
 */
export function embedText(text: string, dimensions: number = HASHING_EMBEDDER_DIMENSIONS): Float32Array {
  if (!Number.isInteger(dimensions) || dimensions < 1) throw new RangeError(`dimensions must be an integer >= 1, got ${dimensions}`);
  const counts = new Map<string, { count: number; weight: number }>();
  const add = (feature: string, weight: number) => {
    const entry = counts.get(feature);
    if (entry) entry.count++;
    else counts.set(feature, { count: 1, weight });
  };
  const terms = searchTerms(text);
  if (terms.length > 0) {
    for (const term of terms) {
      add(`w:${term}`, STEM_WEIGHT);
      for (const gram of trigrams(term)) add(`g:${gram}`, TRIGRAM_WEIGHT);
    }
  } else {
    const fallback = words(text);
    if (fallback.length > 0) for (const word of fallback) add(`w:${stemOf(word)}`, STEM_WEIGHT);
    else for (const character of text.replace(/\s+/gu, '')) add(`c:${character}`, STEM_WEIGHT);
  }
  const vector = new Float64Array(dimensions);
  for (const [feature, { count, weight }] of counts) {
    const share = (weight * (1 + Math.log(count))) / Math.sqrt(HASHES_PER_FEATURE);
    for (let salt = 0; salt < HASHES_PER_FEATURE; salt++) {
      addHashed(vector, fnv1a(`${salt}:${feature}`), share);
    }
  }
  return normalise(vector);
}
