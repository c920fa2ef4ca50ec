/**
 * Text as Postgres stores it and as error messages quote it back: the patterns of storable text
 * (no NUL, no unpaired UTF-16 surrogate), lengths in code points, and short, printable renderings
 * of what a caller sent (a value, a field's path, the kind of a value).
 */
import { plural } from './plural.ts';

/** How much of an offending value is quoted back: enough to recognise it, never a whole input. */
const MAX_QUOTED_CHARS = 60;

/** One character of storable text: anything but NUL and unpaired surrogates (a pair is one character). */
const SAFE_CHAR = String.raw`[^\u0000\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF]`;

/**
 * Text Postgres stores faithfully: no NUL (U+0000), no unpaired UTF-16 surrogate. The screen of
 * validateInput (validation.ts) enforces it on every string and key of every input; every text field
 * advertises it as its `pattern`. Written without lookarounds, and means the same with or without
 * the regex `u` flag.
 */
export const SAFE_TEXT_PATTERN = new RegExp(String.raw`^(?:${SAFE_CHAR})*$`);

/** {@link SAFE_TEXT_PATTERN}, with at least one character other than whitespace. Linear time. */
export const NON_BLANK_TEXT_PATTERN = new RegExp(
  String.raw`^\s*(?:[^\s\u0000\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])(?:${SAFE_CHAR})*$`,
);

/** The first NUL or unpaired surrogate in a string (no `u` flag: it sees UTF-16 code units). */
export const UNSAFE_CHAR = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Characters shown escaped when text is quoted back: controls and unpaired surrogates. */
const UNPRINTABLE = /[\u0000-\u001F\u007F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The number of Unicode code points of `text`: how JSON Schema's minLength/maxLength and Postgres count characters. */
export function codePointLength(text: string): number {
  let length = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        length--;
        i++;
      }
    }
  }
  return length;
}

/**
 * A field's path as callers write it: `task_ids[3]`, `symptoms.headache.severity`. Keys are
 * shortened and escaped like quoted values, so a path never carries what it reports.
 */
export function fieldPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += `${text ? '.' : ''}${printable(shorten(String(segment)))}`;
  }
  return text || '(input)';
}

/** What kind of JSON value `value` is, in words: "a string", "an integer", "null". */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number';
  if (typeof value === 'boolean') return 'a boolean';
  return typeof value;
}

/** A short rendering of an offending value: quoted, and cut to a recognisable prefix. */
export function render(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'object' && value !== null)
    return Array.isArray(value) ? `an array of ${plural(value.length, 'item')}` : 'an object';
  return String(value);
}

/** `text` in single quotes, cut to a recognisable prefix, with controls and unpaired surrogates escaped. */
export function quote(text: string): string {
  return `'${printable(shorten(text))}'`;
}

/** At most MAX_QUOTED_CHARS code units, never splitting a surrogate pair, with … when cut. */
function shorten(text: string): string {
  if (text.length <= MAX_QUOTED_CHARS) return text;
  const end = /[\uD800-\uDBFF]/.test(text[MAX_QUOTED_CHARS - 1]!) ? MAX_QUOTED_CHARS - 1 : MAX_QUOTED_CHARS;
  return `${text.slice(0, end)}…`;
}

/** Escapes control characters and unpaired surrogates as \uXXXX, so quoted text is readable and storable. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (character) => `\\u${hex(character.charCodeAt(0))}`);
}

/** A UTF-16 code unit as four upper-case hex digits, as in U+D800. */
export function hex(code: number): string {
  return code.toString(16).toUpperCase().padStart(4, '0');
}
