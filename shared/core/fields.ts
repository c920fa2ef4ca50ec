/**
 * Field builders: every tool builds its input schema from these, so that each rule is written
 * once, enforced by `validateInput` (validation.ts) and advertised in the input JSON Schema (catalog, MCP
 * `inputSchema`, OpenAPI) in the same terms. A standard JSON Schema validator (draft 2020-12,
 * formats asserted) reading the advertised schema accepts exactly what validateInput accepts:
 *
 * - {@link text}: lengths in Unicode code points (as JSON Schema and Postgres count them), no NUL
 *   or unpaired surrogate (`pattern`), optionally not blank;
 * - {@link uuid} (`format: "uuid"`, exactly as standard validators read it), {@link uuidList},
 *   {@link distinctList} (items never repeat: `uniqueItems`);
 * - {@link dateTime}: the RFC 3339 date-times Postgres stores as written (`format: "date-time"` and
 *   one short `pattern` for what the format leaves open: the range of dates, optionally bounded, and
 *   the form of the time); {@link date}: calendar dates (`format: "date"`, and the range of years);
 * - free-form JSON (a JSON value, a JSON object or its text) is built in ./json-fields.ts.
 *
 * Rules between fields are avoided: model APIs refuse `oneOf`, `anyOf`, `allOf` and `not` at a
 * schema's root, where such a rule would have to be said, so a tool takes one field of several
 * forms, or gives an absent field a default, instead. Where a client's field names need one (two
 * fields that each name the same thing), {@link oneOfRequired} states it in the fields'
 * descriptions, a documented exception (docs/schemas.md).
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
import { refuseValue, type FieldProblem } from './issues.ts';
import { codePointLength, NON_BLANK_TEXT_PATTERN, quote, SAFE_TEXT_PATTERN } from './text.ts';
import { sortsBetween } from './date-range.ts';

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

/** What `format: "uuid"` accepts in standard validators (Ajv's ajv-formats, among others). */
const UUID = /^(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i;
const URN_PREFIX = /^urn:uuid:/i;
const UUID_EXPECTED = 'a UUID, e.g. 3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f';

/**
 * A UUID as the JSON Schema format `uuid` has it (standard validators: 32 hex digits in groups of
 * 8-4-4-4-12, either case, optionally after `urn:uuid:`), advertised as `format: "uuid"` alone. It is
 * received without the prefix and in lower case, the form Postgres prints, so an id matches its
 * record (and repeats are recognised) however the caller wrote it. Any version: an id that names
 * nothing is NOT_FOUND, as for every id.
 */
export function uuid() {
  return z
    .string()
    .check((payload) => {
      if (!UUID.test(payload.value))
        refuseValue(payload, { code: 'invalid_format', expected: UUID_EXPECTED, received: quote(payload.value) });
    })
    .overwrite((value) => value.replace(URN_PREFIX, '').toLowerCase())
    .meta({ format: 'uuid' });
}

/** A list of `min` to `max` UUIDs in which no id repeats (`uniqueItems`). */
export function uuidList({ min, max }: { min: number; max: number }) {
  return distinctList(uuid(), { min, max });
}

/** A list of `min` (default 0) to `max` ids (strings or numbers) in which none repeats (`uniqueItems`). */
export function distinctList<Item extends z.ZodType<string | number>>(item: Item, { min = 0, max }: { min?: number; max: number }) {
  const list = z.array(item).max(max);
  return (min > 0 ? list.min(min) : list)
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
 * The time of an accepted date-time, after its date, as advertised: what it adds to the RFC 3339
 * `date-time` format (which bounds the hours and minutes itself): upper-case T and Z, no leap second,
 * a fraction of 1 to 9 digits, an offset of ±HH:MM within ±15:59.
 */
const TIME = String.raw`T\d\d:\d\d:[0-5]\d(\.\d{1,9})?(Z|[+-](0\d|1[0-5]):\d\d)$`;
/** {@link TIME} with the bounds the format adds: what the server checks. */
const BOUNDED_TIME = String.raw`T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?(?:Z|[+-](?:0\d|1[0-5]):[0-5]\d)$`;

/**
 * The date-times Postgres `timestamptz` stores exactly as written, of any year 0001 to 9999: RFC 3339
 * `date-time` (`YYYY-MM-DDTHH:MM:SS`, optional fraction of 1 to 9 digits, then `Z` or `±HH:MM`) with
 * no leap second, UTC offsets within ±15:59, upper-case `T` and `Z`. What a standard validator's
 * `format: "date-time"` accepts, with {@link TIME}'s pattern, within years 0001 to 9999.
 */
export const DATE_TIME_PATTERN = new RegExp(`^${DATE}${BOUNDED_TIME}`);

const DATE_TIME_EXPECTED =
  'an RFC 3339 date-time with seconds and a UTC offset between -15:59 and +15:59, e.g. 2025-10-05T14:30:00Z or 2025-10-05T16:30:00+02:00';

/** A calendar date, YYYY-MM-DD, years 0001 to 9999: what a standard validator's `format: "date"` accepts, year 0000 aside. */
export const DATE_PATTERN = new RegExp(`^${DATE}$`);

/**
 * The dates {@link date} accepts: years 1000 to 9999, which the pattern `^[1-9]` says beside
 * `format: "date"` (which alone would allow year 0000, where Postgres has none).
 */
export const DATE_RANGE = { from: '1000-01-01', to: '9999-12-31' } as const;

/**
 * The dates of the date-times {@link dateTime} accepts, as written: years 1000 to 8999. A UTC offset
 * moves an instant by at most 16 hours, so every accepted date-time is an instant that JavaScript
 * (`toISOString`) and Postgres both write with a four-digit year; and the pattern says the range in
 * one character class (`^[1-8]`).
 */
export const DATE_TIME_RANGE = { from: '1000-01-01', to: '8999-12-31' } as const;

/** A calendar date, YYYY-MM-DD, that Postgres `date` stores, within {@link DATE_RANGE} (advertised as `format: date` and a short pattern). */
export function date() {
  const range = new RegExp(`^${sortsBetween(DATE_RANGE.from, DATE_RANGE.to)}`);
  return z
    .string()
    .check((payload) => {
      const value = payload.value;
      if (!DATE_PATTERN.test(value)) {
        const day = /^(\d{4})-(\d\d)-(\d\d)$/.exec(value);
        const why = !day ? 'not in the form YYYY-MM-DD' : day[1] === '0000' ? 'there is no year 0000' : 'not a calendar date';
        refuseValue(payload, {
          code: 'invalid_format',
          expected: 'a calendar date YYYY-MM-DD, e.g. 2025-10-05',
          received: `${quote(value)} (${why})`,
        });
      } else if (!range.test(value)) {
        refuseValue(payload, {
          code: 'out_of_range',
          expected: `a date from ${DATE_RANGE.from} to ${DATE_RANGE.to}`,
          received: quote(value),
        });
      }
    })
    .meta({ format: 'date', pattern: range.source });
}

export interface DateTimeOptions {
  /** Earliest date (YYYY-MM-DD, inclusive), compared with the value's date as written (before its offset applies). */
  minDate?: string;
  /** Latest date (YYYY-MM-DD, inclusive), compared with the value's date as written. */
  maxDate?: string;
}

/**
 * A date-time as {@link DATE_TIME_PATTERN} describes it, its date as written within
 * {@link DATE_TIME_RANGE} and the bounds given. Advertised as `format: "date-time"` and one short
 * pattern saying the rest: the range of dates, then {@link TIME}. Bounds apply to the date as written,
 * so that a pattern can state them exactly (an offset moves the instant by at most 16 hours, which a
 * pattern cannot follow).
 */
export function dateTime({ minDate, maxDate }: DateTimeOptions = {}) {
  const from = minDate && minDate > DATE_TIME_RANGE.from ? minDate : DATE_TIME_RANGE.from;
  const to = maxDate && maxDate < DATE_TIME_RANGE.to ? maxDate : DATE_TIME_RANGE.to;
  if (from > to)
    throw new Error(
      `dateTime: no date from ${from} to ${to}; give minDate <= maxDate within ${DATE_TIME_RANGE.from} to ${DATE_TIME_RANGE.to}.`,
    );
  const advertised = new RegExp(`^${sortsBetween(from, to)}.*${TIME}`);
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
      } else if (!advertised.test(value)) {
        // Of the right form: its date is out of range.
        refuseValue(payload, {
          code: 'out_of_range',
          expected: `a date-time from ${from} to ${to} (its date as written)`,
          received: quote(value),
        });
      }
    })
    .meta({ format: 'date-time', pattern: advertised.source });
}

/** The parts of anything shaped like a date-time, to say what is wrong with one that is refused. */
const DATE_TIME_LIKE = /^(\d{4})-(\d\d)-(\d\d)([Tt ])(\d\d):(\d\d)(?::(\d\d)(?:\.(\d*))?)?(.*)$/;

/** Why `value` is not an accepted date-time, in a few words; undefined when no reason stands out. */
function dateTimeProblem(value: string): string | undefined {
  const parts = DATE_TIME_LIKE.exec(value);
  if (!parts) return 'not in the form YYYY-MM-DDTHH:MM:SS followed by Z or ±HH:MM';
  const [, year, month, day, separator, hour, minute, second, fraction, zone = ''] = parts;
  if (year === '0000') return 'there is no year 0000';
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

// Rules between fields ----------------------------------------------------------------------

/** The code of the field error {@link oneOfRequired} answers. */
export const ONE_OF_REQUIRED = 'one_of_required';

/**
 * `object` refusing an input that gives none of `names` (null counts as not given): the one kind of
 * rule between fields an input may have, for fields that each name the same thing (an item by
 * `item_id` or by `item_title`). No model API takes it in a schema (it would need `anyOf` at the
 * root), so the fields' descriptions say it, and docs/schemas.md lists it among the documented
 * exceptions. The error is on the first name, with {@link ONE_OF_REQUIRED} as its code.
 */
export function oneOfRequired<T extends z.ZodObject>(object: T, names: readonly [string, string, ...string[]]): T {
  const others = names.slice(1);
  const expected = `given, or ${others.length === 1 ? others[0] : `one of ${others.join(', ')}`} instead`;
  return object.check((payload) => {
    const value = payload.value as Record<string, unknown>;
    if (names.some((name) => value[name] !== undefined && value[name] !== null)) return;
    const problem: FieldProblem = { code: ONE_OF_REQUIRED, expected, received: others.length === 1 ? 'neither' : 'none of them' };
    payload.issues.push({ code: 'custom', path: [names[0]], message: `must be ${expected}`, input: undefined, params: problem });
  });
}
