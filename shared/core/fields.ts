/**
 * Field builders: every tool builds its input schema from these, so that each rule is written
 * once, enforced by `validateInput` (validation.ts) and advertised in the input JSON Schema (catalog, MCP
 * `inputSchema`, OpenAPI) in the same terms. A standard JSON Schema validator (draft 2020-12,
 * formats asserted) reading the advertised schema accepts exactly what validateInput accepts:
 *
 * - {@link text}: lengths in Unicode code points (as JSON Schema and Postgres count them), no NUL
 *   or unpaired surrogate (`pattern`), optionally not blank;
 * - {@link uuid}, {@link uuidList}, {@link distinctList} (items never repeat: `uniqueItems`);
 * - {@link dateTime}: the RFC 3339 date-times Postgres stores (`format` and `pattern`), instants of
 *   years 0001 to 9999 (`not`), optionally bounded by calendar dates; {@link date}: calendar dates
 *   Postgres stores;
 * - {@link jsonValue}: any JSON value of storable text, nested to a bounded depth (the depth is
 *   said in words: JSON Schema could bound it only with `$ref`, which model APIs refuse).
 *
 * No input ties two fields together: model APIs refuse `oneOf`, `anyOf`, `allOf` and `not` at a
 * schema's root, where such a rule would have to be said, so a tool takes one field of several
 * forms, or gives an absent field a default, instead (see docs/schemas.md).
 *
 * Each builder checks with the same RegExp it advertises, or with code whose equivalence to the
 * advertised keyword the differential test (test/unit/schema-differential.test.ts) verifies.
 *
 * @example
 * const input = z.strictObject({
 *   title: text({ max: 500, blank: false }).describe('The title.'),
 *   task_ids: uuidList({ min: 1, max: 50 }).describe('Task ids.'),
 *   due: dateTime({ minDate: '2000-01-01' }).optional().describe('When it is due.'),
 * });
 */
import * as z from 'zod';
import { plural } from './plural.ts';
import { refuseValue } from './issues.ts';
import { codePointLength, NON_BLANK_TEXT_PATTERN, quote, SAFE_TEXT_PATTERN } from './text.ts';
import { FORBIDDEN_KEYS } from './validation.ts';

/**
 * The range of a Postgres `integer` (int4), the type of every id and count the tools store or
 * query with: a number outside it is refused as input, never by the database.
 */
export const INT4 = { min: -2_147_483_648, max: 2_147_483_647 } as const;

export interface TextOptions {
  /** Most characters (Unicode code points). */
  max: number;
  /** Fewest characters (Unicode code points). Default 0. */
  min?: number;
  /** Whether an empty or whitespace-only text is accepted. Default true. */
  blank?: boolean;
  /**
   * Whether the tool receives the text without surrounding whitespace (for names matched later,
   * such as titles). The rules above still apply to the text as sent. Default false.
   */
  trim?: boolean;
}

/** At least one character that is not whitespace (the same `\s` as String.prototype.trim). */
const NOT_BLANK = /\S/;

/**
 * A string of at most `max` characters, counted in code points (an emoji is one character, as in
 * JSON Schema's `maxLength` and Postgres's `varchar(n)`). With `blank: false` it must contain a
 * character other than whitespace. Checked as sent; kept as sent unless `trim` is set.
 */
export function text({ max, min = 0, blank = true, trim = false }: TextOptions) {
  const least = blank ? min : Math.max(min, 1);
  const expected = least > 0 ? `between ${least} and ${max} characters` : `at most ${max} characters`;
  const checked = z.string().check((payload) => {
    const value = payload.value;
    if (!blank && !NOT_BLANK.test(value)) {
      refuseValue(payload, {
        code: 'blank',
        expected: 'text with at least one character other than whitespace',
        received: value === '' ? 'an empty string' : `only whitespace (${plural(codePointLength(value), 'character')})`,
      });
      return;
    }
    // A string has between length/2 and length code points: count only when that decides.
    if (value.length <= max && value.length >= 2 * least) return;
    const length = codePointLength(value);
    if (length > max) refuseValue(payload, { code: 'too_big', expected, received: plural(length, 'character') });
    else if (length < least) refuseValue(payload, { code: 'too_small', expected, received: plural(length, 'character') });
  });
  // overwrite, not transform: the field stays a string (a union with it as an option still
  // reports its problems), and the metadata below stays attached.
  return (trim ? checked.overwrite((value) => value.trim()) : checked).meta({
    ...(least > 0 ? { minLength: least } : {}),
    maxLength: max,
    pattern: (blank ? SAFE_TEXT_PATTERN : NON_BLANK_TEXT_PATTERN).source,
  });
}

/**
 * A UUID (any RFC 9562 version, either case), advertised as `format: uuid` with zod's pattern. It
 * is lower-cased, the form Postgres prints, so an id matches its record (and repeats are
 * recognised) whatever case the caller wrote it in.
 */
export function uuid() {
  return z.uuid().toLowerCase();
}

/** A list of `min` to `max` UUIDs in which no id repeats (`uniqueItems`). */
export function uuidList({ min, max }: { min: number; max: number }) {
  return distinctList(uuid(), { min, max });
}

/** A list of `min` (default 0) to `max` ids (strings or numbers) in which none repeats (`uniqueItems`). */
export function distinctList<Item extends z.ZodType<string | number>>(item: Item, { min = 0, max }: { min?: number; max: number }) {
  return z
    .array(item)
    .min(min)
    .max(max)
    .check((payload) => {
      const seen = new Map<unknown, number>();
      for (const [index, id] of payload.value.entries()) {
        const first = seen.get(id);
        if (first !== undefined) {
          const shown = typeof id === 'string' ? quote(id) : String(id);
          refuseValue(payload, {
            code: 'duplicate_item',
            expected: 'a list of distinct ids',
            received: `${shown} twice, at positions ${first} and ${index}`,
          });
          return;
        }
        seen.set(id, index);
      }
    })
    .meta({ uniqueItems: true });
}

// Dates and times ---------------------------------------------------------------------------

/** Years 0001 to 9999 (Postgres has no year 0). */
const YEAR = String.raw`(?:[1-9]\d{3}|0[1-9]\d{2}|00[1-9]\d|000[1-9])`;
/** Two digits divisible by 4, 00 excepted. */
const LEAP_PAIR = String.raw`(?:0[48]|[2468][048]|[13579][26])`;
/** A calendar date: month lengths, and 29 February in leap years only. */
const DATE = String.raw`(?:${YEAR}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|02-(?:0[1-9]|1\d|2[0-8]))|(?:\d\d${LEAP_PAIR}|${LEAP_PAIR}00)-02-29)`;

/**
 * The date-times accepted everywhere: RFC 3339 `date-time` (`YYYY-MM-DDTHH:MM:SS`, optional
 * fraction of 1 to 9 digits, then `Z` or `±HH:MM`), restricted to what Postgres `timestamptz` stores
 * exactly as written: years 0001-9999, no leap second, UTC offsets within ±15:59, upper-case `T`
 * and `Z`. Every such string is also a valid JSON Schema `date-time`.
 */
export const DATE_TIME_PATTERN = new RegExp(
  String.raw`^${DATE}T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?(?:Z|[+-](?:0\d|1[0-5]):[0-5]\d)$`,
);

const DATE_TIME_EXPECTED =
  'an RFC 3339 date-time with seconds and a UTC offset between -15:59 and +15:59, e.g. 2025-10-05T14:30:00Z or 2025-10-05T16:30:00+02:00';

/**
 * Date-times on the first or last day of years 0001 to 9999 whose offset could carry the instant
 * out of them: 0001-01-01 with an offset ahead of UTC, 9999-12-31 with one behind. Refused (and
 * advertised as `not`), so that every accepted date-time is an instant of years 0001 to 9999 in
 * UTC too, which JavaScript writes (`toISOString`) in a form Postgres reads.
 */
export const EDGE_OFFSET_PATTERN = new RegExp(
  String.raw`^(?:0001-01-01T[^+]*\+|9999-12-31T[^-]*-)(?:00:(?:0[1-9]|[1-5]\d)|(?:0[1-9]|1\d):\d\d)$`,
);

const EDGE_OFFSET_EXPECTED =
  'a date-time within years 0001 to 9999 in UTC too: on 0001-01-01 end with Z or an offset behind UTC, on 9999-12-31 with Z or an offset ahead of UTC';

/** A calendar date, YYYY-MM-DD, years 0001 to 9999: the form of {@link date} and of {@link DateTimeOptions} bounds. */
export const DATE_PATTERN = new RegExp(`^${DATE}$`);

/** A calendar date, YYYY-MM-DD, that Postgres `date` stores (years 0001 to 9999; advertised as `format: date` and that pattern). */
export function date() {
  return z
    .string()
    .check((payload) => {
      if (DATE_PATTERN.test(payload.value)) return;
      const day = /^(\d{4})-(\d\d)-(\d\d)$/.exec(payload.value);
      const why = !day ? 'not in the form YYYY-MM-DD' : day[1] === '0000' ? 'there is no year 0000' : 'not a calendar date';
      refuseValue(payload, {
        code: 'invalid_format',
        expected: 'a calendar date YYYY-MM-DD, e.g. 2025-10-05',
        received: `${quote(payload.value)} (${why})`,
      });
    })
    .meta({ format: 'date', pattern: DATE_PATTERN.source });
}

export interface DateTimeOptions {
  /** Earliest date (YYYY-MM-DD, inclusive), compared with the value's date as written (before its offset applies). */
  minDate?: string;
  /** Latest date (YYYY-MM-DD, inclusive), compared with the value's date as written. */
  maxDate?: string;
}

/**
 * A date-time as {@link DATE_TIME_PATTERN} describes it (advertised as `format: date-time` and
 * that `pattern`), optionally within calendar-date bounds. Bounds apply to the date as written,
 * so that a JSON Schema `pattern` can state them exactly (an offset moves the instant by at most
 * 16 hours, which a pattern cannot follow).
 */
export function dateTime({ minDate, maxDate }: DateTimeOptions = {}) {
  const bounds = [
    ...(minDate ? [{ pattern: sortsFrom(minDate, 'after'), expected: `on or after ${minDate}` }] : []),
    ...(maxDate ? [{ pattern: sortsFrom(maxDate, 'before'), expected: `on or before ${maxDate}` }] : []),
  ];
  return z
    .string()
    .check((payload) => {
      const value = payload.value;
      if (!DATE_TIME_PATTERN.test(value)) {
        const why = dateTimeProblem(value);
        refuseValue(payload, {
          code: 'invalid_format',
          expected: DATE_TIME_EXPECTED,
          received: `${quote(value)}${why ? ` (${why})` : ''}`,
        });
        return;
      }
      if (EDGE_OFFSET_PATTERN.test(value)) {
        refuseValue(payload, { code: 'out_of_range', expected: EDGE_OFFSET_EXPECTED, received: quote(value) });
        return;
      }
      for (const bound of bounds) {
        if (!bound.pattern.test(value)) {
          refuseValue(payload, {
            code: 'out_of_range',
            expected: `a date-time ${bound.expected} (its date as written)`,
            received: quote(value),
          });
          return;
        }
      }
    })
    .meta({
      format: 'date-time',
      pattern: DATE_TIME_PATTERN.source,
      not: { pattern: EDGE_OFFSET_PATTERN.source },
      ...(bounds.length ? { allOf: bounds.map((bound) => ({ pattern: bound.pattern.source })) } : {}),
    });
}

/**
 * A pattern for date-times whose date (`YYYY-MM-DD`, fixed width, so text order is time order)
 * sorts at or after / at or before `date`: the same date, or a first differing digit that is
 * larger / smaller. Matches the start of the value only.
 */
function sortsFrom(date: string, side: 'after' | 'before'): RegExp {
  const alternatives = [date];
  for (let i = 0; i < date.length; i++) {
    const digit = Number(date[i]);
    if (Number.isNaN(digit)) continue;
    if (side === 'after' && digit < 9) alternatives.push(`${date.slice(0, i)}[${digit + 1}-9]`);
    if (side === 'before' && digit > 0) alternatives.push(`${date.slice(0, i)}[0-${digit - 1}]`);
  }
  return new RegExp(`^(?:${alternatives.join('|')})`);
}

/** The parts of anything shaped like a date-time, to say what is wrong with one that is refused. */
const DATE_TIME_LIKE = /^(\d{4})-(\d\d)-(\d\d)([Tt ])(\d\d):(\d\d)(?::(\d\d)(?:\.(\d*))?)?(.*)$/;

/** Why `value` is not an accepted date-time, in a few words; undefined when no reason stands out. */
function dateTimeProblem(value: string): string | undefined {
  const parts = DATE_TIME_LIKE.exec(value);
  if (!parts) return 'not in the form YYYY-MM-DDTHH:MM:SS followed by Z or ±HH:MM';
  const [, year, month, day, separator, hour, minute, second, fraction, zone = ''] = parts;
  if (year === '0000') return 'there is no year 0000; years run from 0001 to 9999';
  if (!DATE_PATTERN.test(`${year}-${month}-${day}`)) return `${year}-${month}-${day} is not a calendar date`;
  if (separator !== 'T') return 'separate the date and the time with an upper-case T';
  if (second === undefined) return 'the seconds are missing';
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59)
    return `${hour}:${minute}:${second} is not a time of day (no leap seconds)`;
  if (fraction !== undefined && (fraction.length < 1 || fraction.length > 9)) return 'a fraction of a second has 1 to 9 digits';
  if (zone === '') return 'the time zone is missing: end with Z (UTC) or an offset such as +02:00';
  if (zone === 'z') return 'write Z in upper case';
  const offset = /^[+-](\d\d):?(\d\d)?$/.exec(zone);
  if (!offset) return `'${zone.slice(0, 20)}' is not a time zone: end with Z or an offset such as +02:00`;
  if (!zone.includes(':') || offset[2] === undefined) return 'write the UTC offset as ±HH:MM';
  if (Number(offset[1]) > 15 || Number(offset[2]) > 59)
    return `the UTC offset ${zone} is outside -15:59 to +15:59, which Postgres cannot store`;
  return undefined;
}

// Free-form JSON ----------------------------------------------------------------------------

/** The defaults of {@link jsonValue}. */
export const JSON_VALUE_DEFAULTS = { maxDepth: 8 } as const;

/** Object keys in free-form JSON: storable text, and never a key that reaches a prototype. */
const jsonKey = z.string().meta({ pattern: SAFE_TEXT_PATTERN.source, not: { enum: [...FORBIDDEN_KEYS] } });

/**
 * Any JSON value (string, number, boolean, null, array, object) whose arrays and objects nest at
 * most `maxDepth` levels (a scalar is depth 0, `{"a": {"b": 1}}` depth 2). Strings and keys are
 * storable text, as everywhere (the screen of validateInput enforces it).
 *
 * Advertised as any value, the depth said in its description: JSON Schema can bound a depth only
 * with one `$defs` entry per level, which model APIs refuse (Gemini's `parameters`) or read as
 * recursion (Anthropic's strict tool use). It is among the documented exceptions (docs/schemas.md).
 */
export function jsonValue({ maxDepth = JSON_VALUE_DEFAULTS.maxDepth }: { maxDepth?: number } = {}): z.ZodType<unknown> {
  return z
    .unknown()
    .check((payload) => {
      const depth = depthOf(payload.value);
      if (depth > maxDepth)
        refuseValue(payload, {
          code: 'too_deep',
          expected: `a JSON value nested at most ${maxDepth} levels deep`,
          received: `one that nests ${depth}`,
        });
    })
    .meta({ description: depthSentence(maxDepth) });
}

/**
 * A JSON object, the table tools' `json` data type ("must be a valid JSON object"):
 * any JSON as its values, nesting at most `maxDepth` levels in all (the object itself is one).
 * Arrays, strings and numbers are refused at the top.
 */
export function jsonObject({ maxDepth = JSON_VALUE_DEFAULTS.maxDepth }: { maxDepth?: number } = {}): z.ZodType<Record<string, unknown>> {
  return z
    .record(jsonKey, z.unknown())
    .check((payload) => {
      const depth = depthOf(payload.value);
      if (depth > maxDepth)
        refuseValue(payload, {
          code: 'too_deep',
          expected: `a JSON object nested at most ${maxDepth} levels deep (the object itself is one)`,
          received: `one that nests ${depth}`,
        });
    })
    .meta({ description: depthSentence(maxDepth) });
}

/** The depth rule in words, for a description (where a field's own description is appended). */
export function depthSentence(maxDepth: number): string {
  return `Any JSON nested at most ${maxDepth} levels deep (an object or array is one level; {"a": {"b": 1}} is 2).`;
}

/** How many levels of arrays and objects `value` nests. */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let deepest = 0;
  for (const item of Object.values(value)) deepest = Math.max(deepest, depthOf(item));
  return deepest + 1;
}
