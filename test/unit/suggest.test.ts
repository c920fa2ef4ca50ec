/**
 * "Did you mean": the edit distance against textbook values, and the suggestions among the real
 * tool ids for names an agent written to other conventions sends.
 */
import { describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import { closestNames, didYouMean, editDistance, looseName } from '../../shared/core/suggest.ts';

const ids = tools.map((tool) => tool.id);

describe('editDistance', () => {
  it('is the Levenshtein distance', () => {
    // The classic examples: kitten -> sitting is 3 edits, flaw -> lawn 2.
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('flaw', 'lawn')).toBe(2);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('abc', '')).toBe(3);
    expect(editDistance('same', 'same')).toBe(0);
  });
});

describe('closestNames among the tool ids', () => {
  it('reads snake_case, camelCase and case alike', () => {
    expect(looseName('getDueFlashcards')).toBe('get-due-flashcards');
    expect(looseName('ADD_DOCUMENT')).toBe('add-document');
    expect(closestNames('getDueFlashcards', ids)).toEqual(['get-due-flashcards']);
    expect(closestNames('add_document', ids)).toEqual(['add-document']);
    expect(closestNames('Semantic_Search', ids)).toEqual(['semantic-search']);
  });

  it('finds a name a few letters off, the nearest only', () => {
    expect(closestNames('list-plan', ids)).toEqual(['list-plans']);
    expect(closestNames('log_moods', ids)).toEqual(['log-mood']);
    expect(closestNames('delete_documents', ids)).toEqual(['delete-document']);
  });

  it('suggests nothing for a name that is none of them', () => {
    expect(closestNames('send-email', ids)).toEqual([]);
    expect(closestNames('x'.repeat(10_000), ids)).toEqual([]);
    expect(closestNames('', ids)).toEqual([]);
  });
});

describe('didYouMean', () => {
  it('says one suggestion, several, or nothing', () => {
    expect(didYouMean(['list-plans'])).toBe(' Did you mean list-plans?');
    expect(didYouMean(['a', 'b', 'c'])).toBe(' Did you mean a, b or c?');
    expect(didYouMean([])).toBe('');
  });
});
