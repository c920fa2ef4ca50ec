/**
 * Keys given twice in one JSON object are found in the text as sent (JSON.parse forgets them),
 * compared decoded, with the path to the object that repeats them; nothing else is reported.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { duplicateKeys, fieldPathOf } from '../../shared/core/duplicate-keys.ts';

describe('duplicateKeys', () => {
  it('finds a key given twice, at the top and nested, and compares keys decoded', () => {
    expect(duplicateKeys('{"mood":"happy","mood":"sad"}')).toEqual([{ path: [], key: 'mood' }]);
    expect(duplicateKeys('{"items":[{"title":"a"},{"title":"b","title":"c"}]}')).toEqual([{ path: ['items', 1], key: 'title' }]);
    expect(duplicateKeys('{"m\\u006fod":1, "mood" : 2}')).toEqual([{ path: [], key: 'mood' }]);
    expect(duplicateKeys('[{"params":{"arguments":{"a":{"b":1,"b":2}}}}]')).toEqual([{ path: [0, 'params', 'arguments', 'a'], key: 'b' }]);
  });

  it('reports nothing for distinct keys, the same key in sibling objects, or keys inside strings', () => {
    expect(duplicateKeys('{"a":{"x":1},"b":{"x":2}}')).toEqual([]);
    expect(duplicateKeys('{"a":"\\"a\\":1,\\"a\\":2","b":["{\\"a\\":1}"]}')).toEqual([]);
  });

  it('reports nothing in any serialised JSON value (JSON.stringify never repeats a key), and one key repeated into any object of it', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), (value) => {
        const text = JSON.stringify(value);
        expect(duplicateKeys(text)).toEqual([]);
        // Repeat the first key of the first object that has one: found, and nothing else.
        let repeatedKey: string | undefined;
        const write = (node: unknown): string => {
          if (Array.isArray(node)) return `[${node.map(write).join(',')}]`;
          if (typeof node !== 'object' || node === null) return JSON.stringify(node);
          const entries = Object.entries(node).map(([key, item]) => `${JSON.stringify(key)}:${write(item)}`);
          const first = Object.keys(node)[0];
          if (repeatedKey === undefined && first !== undefined) {
            repeatedKey = first;
            entries.unshift(`${JSON.stringify(first)}:0`);
          }
          return `{${entries.join(',')}}`;
        };
        const repeated = write(value);
        expect(duplicateKeys(repeated).map((found) => found.key)).toEqual(repeatedKey === undefined ? [] : [repeatedKey]);
      }),
    );
  });

  it('writes paths as messages do', () => {
    expect(fieldPathOf(['items', 2, 'title'])).toBe('items[2].title');
    expect(fieldPathOf([])).toBe('');
  });
});
