/**
 * The offline embedder as it was before 'offline-hashing-v2' (shared/providers/hashing-embedder.ts),
 * kept unchanged as the "before" peer of the retrieval benchmark (bench/retrieval.ts). Not used by
 * any tool.
 *
 * A text becomes a bag of features — its words and the character trigrams of each word — hashed
 * into a fixed number of dimensions, weighted by sublinear term frequency and L2-normalised. No
 * stemming (trigrams stand in for it), a short stop list, and text without features gives the zero
 * vector. Its only threshold was semantic-search's universal default, 0.7. It shares the hashing
 * pieces of the current embedder (shared/providers/feature-hashing.ts), which compute exactly what
 * they computed here.
 */
import { fnv1a } from '../shared/core/fnv1a.ts';
import { addHashed, normalise, trigrams } from '../shared/providers/feature-hashing.ts';

/** The id it stored with its vectors. */
export const HASHING_EMBEDDER_V1_ID = 'offline-hashing-v1';

/** semantic-search's default threshold when this embedder was the default. */
export const HASHING_EMBEDDER_V1_THRESHOLD = 0.7;

/** A whole word counts this much; each of its trigrams half as much, so shared stems count but words count more. */
const WORD_WEIGHT = 1;
const TRIGRAM_WEIGHT = 0.5;

/** Words too common to say what a task is about. They are skipped entirely (word and trigrams). */
const STOP_WORDS = new Set(
  (
    'a an and are as at be by for from has have in into is it its of on or our so that the their then this to was we were will with ' +
    'all any can do does done get not out up via'
  ).split(' '),
);

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu;

/**
 * Embeds `text` into a `dimensions`-long L2-normalised Float32Array (default 1536).
 *
 * Features: each word of the NFKC-normalised, lower-cased text (letters and digits, stop words
 * skipped) and each code-point trigram of the word wrapped in boundary markers ("<engineer>" gives
 * "<en", "eng", …, "er>"). Each feature is hashed with 32-bit FNV-1a to a dimension (hash mod
 * dimensions) and a sign (a bit of the hash's murmur3 finaliser, so collisions cancel on average
 * rather than pile up), weighted by 1 + ln(count) times its kind's weight.
 *
 * A text with no features (empty, whitespace, punctuation, only stop words) gives the all-zero vector:
 * its dot product with any vector, itself included, is 0 — it is similar to nothing.
 */
export function embedTextV1(text: string, dimensions = 1536): Float32Array {
  if (!Number.isInteger(dimensions) || dimensions < 1) throw new RangeError(`dimensions must be an integer >= 1, got ${dimensions}`);
  const counts = new Map<number, { count: number; weight: number }>();
  for (const word of words(text)) {
    addFeature(counts, `w:${word}`, WORD_WEIGHT);
    for (const gram of trigrams(word)) addFeature(counts, `g:${gram}`, TRIGRAM_WEIGHT);
  }
  const vector = new Float64Array(dimensions);
  for (const [hash, { count, weight }] of counts) {
    addHashed(vector, hash, weight * (1 + Math.log(count)));
  }
  return normalise(vector);
}

/** The content words of `text`, in order: NFKC, lower case, stop words removed. */
function words(text: string): string[] {
  const found = text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
  return found.filter((word) => !STOP_WORDS.has(word));
}

function addFeature(counts: Map<number, { count: number; weight: number }>, feature: string, weight: number): void {
  const hash = fnv1a(feature);
  const entry = counts.get(hash);
  if (entry) entry.count++;
  else counts.set(hash, { count: 1, weight });
}
