/**
 * Words of a text, as the offline embedder and semantic-search read them: tokenised, stop words
 * set apart, stemmed with Porter2 (the Snowball English stemmer). Deterministic and offline.
 */
import { stem } from 'porter2';

/**
 * Words that say nothing about what a text is about: the Snowball English stop list
 * (snowballstem.org/algorithms/english/stop.txt), NLTK's additions to it, and the words people
 * wrap a search in ("tasks related to …", "anything about …").
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  // Snowball English.
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its itself ' +
    'they them their theirs themselves what which who whom this that these those am is are was were be been being have has had having ' +
    'do does did doing would should could ought ' +
    "i'm you're he's she's it's we're they're i've you've we've they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll they'll " +
    "isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't wouldn't shan't shouldn't can't cannot couldn't mustn't " +
    "let's that's who's what's here's there's when's where's why's how's " +
    'a an the and but if or because as until while of at by for with about against between into through during before after above below ' +
    'to from up down in out on off over under again further then once here there when where why how all any both each few more most other ' +
    'some such no nor not only own same so than too very ' +
    // NLTK's additions.
    'can will just now ' +
    // How a search is phrased.
    'task tasks todo todos item items thing things stuff anything something everything related regarding concerning please via'
  ).split(' '),
);

/** Letters and digits, with inner apostrophes ("team's", "don't"). */
const WORD = /[\p{L}\p{N}]+(?:'[\p{L}\p{N}]+)*/gu;
/** Porter2 is defined for English words: lower-case a–z and apostrophes. */
const ENGLISH = /^[a-z']+$/;

/**
 * The words of `text`, in order: NFKC-normalised, lower-cased, accents on Latin letters dropped
 * ("Café" -> "cafe"), typographic apostrophes made plain. Punctuation, symbols and emoji are not words.
 */
export function words(text: string): string[] {
  const folded = text
    .normalize('NFKD')
    .replace(/(\p{Script=Latin})\p{M}+/gu, '$1')
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[’‘ʼ]/g, "'");
  return folded.match(WORD) ?? [];
}

/** The Porter2 stem of an English word ("hiring" -> "hire", "engineers" -> "engin"); other words as they are. */
export function stemOf(word: string): string {
  return ENGLISH.test(word) ? stem(word) : word;
}

/**
 * The stems of the words of `text` that are not stop words, in order: what a search for `text`
 * looks for. Empty when the text has nothing but stop words, punctuation, symbols or emoji.
 *
 * @example
 * searchTerms('Hiring backend engineers') // ['hire', 'backend', 'engin']
 * searchTerms('the ???') // []
 */
export function searchTerms(text: string): string[] {
  return words(text)
    .filter((word) => !STOP_WORDS.has(word))
    .map(stemOf);
}
