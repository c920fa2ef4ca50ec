import { describe, expect, it } from 'vitest';
import { searchTerms, stemOf, STOP_WORDS, words } from '../../shared/providers/text.ts';

/**
 * Reference vectors of the Snowball English (Porter2) stemmer: a sample of the word/stem pairs
 * published with the algorithm (snowball-data, english/diffs.txt), chosen to cover its steps.
 */
const PORTER2_REFERENCE = `
abandonment abandon|abasement abas|abbreviation abbrevi|abeyance abey|abhorrence abhorr|abilities abil|able abl
abnormality abnorm|abominably abomin|aborigines aborigin|above abov|abrolhos abrolho|absorbent absorb|absorption absorpt
abundantly abund|academy academi|accessories accessori|accidental accident|accidents accid|accompaniment accompani
accountabilities account|accrued accru|accuracy accuraci|acquittal acquitt|acquitted acquit|active activ|added ad|adds add
administration administr|administer administ|admiralty admiralti|adulatory adulatori|meekest meekest|meekly meek
melancholy melancholi|mellifluousness melliflu|melodramatic melodramat|melolonthidae melolonthida|memorable memor
mercenary mercenari|merciful merci|mercilessly merciless|merrily merrili|mesmerism mesmer|metalliferous metallifer
metropolis metropoli|michell michel|microscopical microscop|midsummer midsumm|mightily mightili|mindedness minded
mineralogical mineralog|ministerialist ministerialist|miscalled miscal|misdeeds misde|misled misl
misrepresentations misrepresent|misrepresenting misrepres|mistakenly mistaken|mistily mistili|mistiness misti
mitrofanievsky mitrofanievski`
  .trim()
  .split(/[|\n]/)
  .map((pair) => pair.split(' ') as [string, string]);

describe('stemOf (Porter2)', () => {
  it('agrees with the Snowball reference vectors', () => {
    expect(PORTER2_REFERENCE.length).toBeGreaterThan(60);
    for (const [word, stem] of PORTER2_REFERENCE) expect([word, stemOf(word)]).toEqual([word, stem]);
  });

  it('gives inflections of a word one stem', () => {
    for (const group of [
      ['hire', 'hires', 'hired', 'hiring'],
      ['engineer', 'engineers', 'engineering'],
      ['migrate', 'migrated', 'migration', 'migrations'],
    ]) {
      expect(new Set(group.map(stemOf)).size).toBe(1);
    }
  });

  it('leaves words that are not plain English as they are', () => {
    expect(stemOf('größe')).toBe('größe');
    expect(stemOf('日本語')).toBe('日本語');
    expect(stemOf('2025')).toBe('2025');
  });
});

describe('words', () => {
  it('lower-cases, folds compatibility forms and accents on Latin letters, keeps inner apostrophes', () => {
    expect(words('Café ＡＰＩ, the team’s Roll-out!')).toEqual(['cafe', 'api', 'the', "team's", 'roll', 'out']);
  });

  it('keeps letters of every script and digits; punctuation, symbols and emoji are not words', () => {
    expect(words('日本語 Ελληνικά 42 🚀 ??? — €')).toEqual(['日本語', 'ελληνικά', '42']);
  });
});

describe('searchTerms', () => {
  it('drops stop words and the words a search is wrapped in, and stems the rest', () => {
    expect(searchTerms('Show me the tasks related to hiring backend engineers')).toEqual(['show', 'hire', 'backend', 'engin']);
  });

  it('is empty when nothing is left to search for', () => {
    for (const text of ['', '  ', 'a', 'the', 'The and of', '???', '🚀', '— …']) expect(searchTerms(text)).toEqual([]);
  });

  it('uses a stop list that holds only lower-case words', () => {
    for (const word of STOP_WORDS) expect(words(word).join("'")).toBe(word);
  });
});
