/**
 * Text and values that break storage or a validator's walk, for the schema generators
 * (schema-arbitrary.ts): characters Postgres cannot store (NUL, unpaired surrogates), text that
 * only looks empty, deep nesting and prototype-reaching keys; and mutations that put any JSON
 * value, or such a value, at any path of another.
 */
import fc from 'fast-check';

/** Text Postgres cannot store: NUL, an unpaired high or low surrogate. */
export const UNSAFE_CHARACTERS = ['\u0000', '\uD83D', '\uDE00'];
const SAFE_CHARACTERS = [
  'a',
  'Z',
  '7',
  '-',
  ' ',
  '\n',
  '\t',
  '\u00A0',
  '\u2028',
  '\uFEFF',
  'é',
  'e\u0301',
  '😀',
  '𝄞',
  '\u0001',
  '"',
  '\\',
  '{',
];
const WHITESPACE = [' ', '\n', '\t', '\r', '\u00A0', '\u2028', '\u3000', '\uFEFF'];

const character = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...SAFE_CHARACTERS) },
  { weight: 1, arbitrary: fc.constantFrom(...UNSAFE_CHARACTERS) },
);
/** Up to 8 characters, now and then one Postgres cannot store. */
export const shortText = fc.array(character, { maxLength: 8 }).map((characters) => characters.join(''));
/** Text of storable characters, starting with a letter. */
export const safeText = fc
  .array(fc.constantFrom(...SAFE_CHARACTERS), { minLength: 1, maxLength: 8 })
  .map((characters) => `w${characters.join('')}`);
/** Text that only looks empty: whitespace of every kind, or nothing. */
export const blankText = fc.array(fc.constantFrom(...WHITESPACE), { maxLength: 4 }).map((characters) => characters.join(''));

/** Text that breaks storage or the validator's walk, to put anywhere. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.tuple(shortText, fc.constantFrom(...UNSAFE_CHARACTERS), shortText).map(([before, unsafe, after]) => `${before}${unsafe}${after}`),
  fc.tuple(fc.constantFrom(...UNSAFE_CHARACTERS), fc.jsonValue({ maxDepth: 1 })).map(([unsafe, value]) => ({ [`key${unsafe}`]: value })),
  fc.integer({ min: 5, max: 80 }).map((depth) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`) as unknown),
  fc.integer({ min: 5, max: 12 }).map((depth) => JSON.parse(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`) as unknown),
  fc.constantFrom(JSON.parse('{"__proto__":{"admin":true}}') as unknown, { constructor: { prototype: 1 } }, 1e308, -0, '', ' ', [], {}),
);

/** `base` with a value replaced or added at a random path: any JSON value, or a hostile one. */
export function mutated(base: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const replacement = fc.oneof({ weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) }, { weight: 2, arbitrary: hostileValue });
  return fc.tuple(base, fc.nat(), replacement, fc.boolean()).map(([value, pick, next, add]) => {
    const copy = structuredClone(value);
    const containers: (Record<string, unknown> | unknown[])[] = [];
    const walk = (node: unknown) => {
      if (typeof node !== 'object' || node === null) return;
      containers.push(node as Record<string, unknown>);
      for (const child of Object.values(node)) walk(child);
    };
    walk(copy);
    if (containers.length === 0) return next;
    const target = containers[pick % containers.length]!;
    const keys = Object.keys(target);
    const key =
      add || keys.length === 0 ? (Array.isArray(target) ? String(target.length) : `added_${pick % 7}`) : keys[pick % keys.length]!;
    Object.defineProperty(target, key, { value: next, enumerable: true, writable: true, configurable: true });
    return copy;
  });
}
