/**
 * The shared field builders: what each accepts and refuses, the message it gives, and the JSON
 * Schema it advertises (judged by Ajv, the standard validator, in schema-differential.test.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import {
  date,
  DATE_TIME_RANGE,
  dateTime,
  distinctList,
  ONE_OF_REQUIRED,
  oneOfRequired,
  text,
  uuid,
  uuidList,
} from '../../shared/core/fields.ts';
import { jsonObject, jsonValue } from '../../shared/core/json-fields.ts';
import { validateInput } from '../../shared/core/validation.ts';
import type { FieldError } from '../../shared/core/contract.ts';

const HINT = 'Example of a valid call: {}';

// ajv-formats is CommonJS; its default export is the plugin itself.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020;
/** The standard validator, formats asserted: the judge of what a field advertises. */
const ajv = addFormats(new Ajv2020({ strict: true }));

/** Validates `{ value }` against `{ value: field }` and returns the field error, if any. */
function problemOf(field: z.ZodType, value: unknown): FieldError | undefined {
  const result = validateInput(z.strictObject({ value: field }), { value }, HINT);
  return result.ok ? undefined : result.error.details!.fields![0];
}

function jsonSchemaOf(field: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(field, { io: 'input' }) as Record<string, unknown>;
}

describe('text', () => {
  const title = text({ max: 5, blank: false });

  it('counts characters as code points, as JSON Schema and Postgres do', () => {
    expect(problemOf(title, '😀😀😀😀😀')).toBeUndefined(); // 10 UTF-16 units, 5 characters
    expect(problemOf(title, '😀😀😀😀😀😀')).toMatchObject({
      code: 'too_big',
      message: "Field 'value' must be between 1 and 5 characters, but received 6 characters.",
    });
    expect(problemOf(text({ max: 10, min: 3 }), '😀😀')).toMatchObject({ code: 'too_small', received: '2 characters' });
    expect(problemOf(text({ max: 10, min: 3 }), 'é')).toMatchObject({ received: '1 character' });
  });

  it('says a blank text is blank, instead of counting what trimming left', () => {
    expect(problemOf(title, ' \n ')).toMatchObject({
      code: 'blank',
      message: "Field 'value' must be text with at least one character other than whitespace, but received only whitespace (3 characters).",
    });
    expect(problemOf(title, '')).toMatchObject({ code: 'blank', received: 'an empty string' });
    expect(problemOf(text({ max: 5 }), ' \n ')).toBeUndefined();
  });

  it('keeps the value as sent, or trims it after checking it as sent', () => {
    expect(title.parse(' a ')).toBe(' a ');
    const name = text({ max: 3, blank: false, trim: true });
    expect(name.parse(' ab')).toBe('ab');
    expect(problemOf(name, ' abc ')).toMatchObject({ code: 'too_big', received: '5 characters' });
    expect(jsonSchemaOf(name)).toMatchObject({ type: 'string', minLength: 1, maxLength: 3 });
  });

  it('advertises its bounds and its text rule', () => {
    expect(jsonSchemaOf(title)).toMatchObject({ type: 'string', minLength: 1, maxLength: 5, pattern: expect.stringContaining('\\s*') });
    expect(jsonSchemaOf(text({ max: 5 }))).not.toHaveProperty('minLength');
  });
});

describe('uuidList', () => {
  const ids = uuidList({ min: 1, max: 3 });
  const a = '3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f';
  const b = '9a1c2e3f-4b5d-4e6f-8a7b-0c1d2e3f4a5b';

  it('refuses a repeated id, saying which and where', () => {
    expect(problemOf(ids, [a, b, a])).toMatchObject({
      code: 'duplicate_item',
      message: `Field 'value' must be a list of distinct ids, but received '${a}' twice, at positions 0 and 2.`,
    });
    expect(problemOf(ids, [a, b])).toBeUndefined();
  });

  it('advertises uniqueItems', () => {
    expect(jsonSchemaOf(ids)).toMatchObject({ type: 'array', minItems: 1, maxItems: 3, uniqueItems: true, items: { format: 'uuid' } });
  });
});

describe('distinctList', () => {
  it('refuses a repeated number, and advertises uniqueItems', () => {
    const ids = distinctList(z.int().min(1), { max: 5 });
    expect(problemOf(ids, [3, 1, 3])).toMatchObject({ code: 'duplicate_item', received: '3 twice, at positions 0 and 2' });
    expect(problemOf(ids, [])).toBeUndefined();
    expect(jsonSchemaOf(ids)).toMatchObject({ type: 'array', maxItems: 5, uniqueItems: true });
  });
});

describe('uuid', () => {
  const id = '3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f';
  const judge = ajv.compile(z.toJSONSchema(uuid(), { io: 'input' }));

  it('takes what format uuid takes, any version and case, with or without urn:uuid:, as the id Postgres prints', () => {
    for (const [sent, received] of [
      [id, id],
      [id.toUpperCase(), id],
      [`urn:uuid:${id}`, id],
      ['00000000-0000-0000-0000-000000000000', '00000000-0000-0000-0000-000000000000'],
      ['12345678-1234-0234-0234-123456789abc', '12345678-1234-0234-0234-123456789abc'],
    ]) {
      expect(uuid().parse(sent), sent).toBe(received);
      expect(judge(sent), sent).toBe(true);
    }
  });

  it('refuses what format uuid refuses, saying what a UUID looks like', () => {
    for (const sent of ['', 'not-a-uuid', id.replaceAll('-', ''), `{${id}}`, `${id}0`, `urn:${id}`]) {
      expect(problemOf(uuid(), sent), sent).toMatchObject({ code: 'invalid_format', expected: expect.stringContaining('a UUID, e.g.') });
      expect(judge(sent), sent).toBe(false);
    }
  });

  it('advertises format uuid alone', () => {
    expect(z.toJSONSchema(uuid(), { io: 'input' })).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'string',
      format: 'uuid',
    });
  });
});

describe('date', () => {
  it.each([
    ['2024-02-29', undefined],
    ['1000-01-01', undefined],
    ['9999-12-31', undefined],
    ['2025-02-29', 'not a calendar date'],
    ['0000-01-01', 'there is no year 0000'],
    ['01/03/2027', 'not in the form YYYY-MM-DD'],
    ['2025-10-05T00:00:00Z', 'not in the form YYYY-MM-DD'],
  ])('%s: %s', (value, why) => {
    const problem = problemOf(date(), value);
    if (why === undefined) expect(problem).toBeUndefined();
    else expect(problem).toMatchObject({ code: 'invalid_format', received: expect.stringContaining(why) });
  });

  it('refuses years before 1000, saying the range', () => {
    expect(problemOf(date(), '0999-12-31')).toMatchObject({ code: 'out_of_range', expected: 'a date from 1000-01-01 to 9999-12-31' });
  });

  it('advertises format date and the range of years in a short pattern', () => {
    expect(z.toJSONSchema(date(), { io: 'input' })).toMatchObject({ type: 'string', format: 'date', pattern: '^[1-9]' });
  });
});

describe('dateTime', () => {
  const at = dateTime();

  it.each([
    '2025-10-05T14:30:00Z',
    '2025-10-05T16:30:00+02:00',
    '2025-10-05T14:30:00.123456789-15:59',
    '2025-10-05T14:30:00+15:59',
    '2025-10-05T14:30:00-00:00',
    '2024-02-29T00:00:00Z',
    '2000-02-29T23:59:59Z',
    '1000-01-01T00:00:00+15:59',
    '8999-12-31T23:59:59.999999999-15:59',
  ])('accepts %s', (value) => {
    expect(problemOf(at, value)).toBeUndefined();
  });

  it.each([
    ['2025-10-05T14:30:00-23:59', 'the UTC offset -23:59 is outside -15:59 to +15:59'],
    ['2025-10-05T14:30:00+16:00', 'the UTC offset +16:00 is outside'],
    ['2025-10-05T14:30:00', 'the time zone is missing'],
    ['2025-10-05T14:30Z', 'the seconds are missing'],
    ['2025-10-05 14:30:00Z', 'upper-case T'],
    ['2025-10-05t14:30:00Z', 'upper-case T'],
    ['2025-10-05T14:30:00z', 'write Z in upper case'],
    ['2025-10-05T14:30:00+0200', 'write the UTC offset as ±HH:MM'],
    ['2025-10-05T14:30:00+02', 'write the UTC offset as ±HH:MM'],
    ['2025-10-05T14:30:00.Z', 'a fraction of a second has 1 to 9 digits'],
    ['2025-10-05T14:30:00.1234567890Z', 'a fraction of a second has 1 to 9 digits'],
    ['2025-10-05T24:00:00Z', 'is not a time of day'],
    ['2016-12-31T23:59:60Z', 'is not a time of day (no leap seconds)'],
    ['2025-02-29T00:00:00Z', '2025-02-29 is not a calendar date'],
    ['1900-02-29T00:00:00Z', '1900-02-29 is not a calendar date'],
    ['2025-04-31T00:00:00Z', 'is not a calendar date'],
    ['0000-01-01T00:00:00Z', 'there is no year 0000'],
    ['tomorrow', 'not in the form YYYY-MM-DDTHH:MM:SS'],
    ['+12025-10-05T14:30:00Z', 'not in the form'],
  ])('refuses %s, saying why', (value, why) => {
    const problem = problemOf(at, value);
    expect(problem).toMatchObject({ code: 'invalid_format' });
    expect(problem!.message).toContain(why);
    expect(problem!.message).toContain('e.g. 2025-10-05T14:30:00Z');
  });

  it.each(['0999-12-31T23:59:59Z', '9000-01-01T00:00:00Z', '0001-01-01T00:00:00Z', '9999-12-31T00:00:00-00:30'])(
    'refuses %s, outside years 1000 to 8999 as written',
    (value) => {
      expect(problemOf(at, value)).toMatchObject({
        code: 'out_of_range',
        expected: 'a date-time from 1000-01-01 to 8999-12-31 (its date as written)',
      });
    },
  );

  it('accepts only instants that JavaScript writes back in a form Postgres reads (four-digit years in UTC too)', () => {
    for (const value of ['1000-01-01T00:00:00+15:59', '8999-12-31T23:59:59.999999999-15:59']) {
      expect(problemOf(at, value), value).toBeUndefined();
      expect(new Date(value).toISOString(), value).toMatch(/^\d{4}-/);
    }
  });

  it('bounds the date as written, inclusive, and says so', () => {
    const bounded = dateTime({ minDate: '1900-01-01', maxDate: '2030-06-15' });
    expect(problemOf(bounded, '1900-01-01T00:00:00+15:00')).toBeUndefined();
    expect(problemOf(bounded, '2030-06-15T23:59:59-15:00')).toBeUndefined();
    expect(problemOf(bounded, '1899-12-31T23:59:59-15:00')).toMatchObject({
      code: 'out_of_range',
      message:
        "Field 'value' must be a date-time from 1900-01-01 to 2030-06-15 (its date as written), but received '1899-12-31T23:59:59-15:00'.",
    });
    expect(problemOf(bounded, '2030-06-16T00:00:00Z')).toMatchObject({
      code: 'out_of_range',
      expected: expect.stringContaining('to 2030-06-15'),
    });
  });

  it('bounds exactly as comparing the date text would, on generated dates and bounds', () => {
    const day = fc
      .date({ min: new Date(`${DATE_TIME_RANGE.from}T00:00:00Z`), max: new Date(`${DATE_TIME_RANGE.to}T00:00:00Z`), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10));
    fc.assert(
      fc.property(day, day, day, (value, one, other) => {
        const [low, high] = one <= other ? [one, other] : [other, one];
        const bounded = dateTime({ minDate: low, maxDate: high });
        const accepted = problemOf(bounded, `${value}T12:00:00Z`) === undefined;
        expect(accepted).toBe(value >= low && value <= high);
      }),
      { seed: 9, numRuns: 300 },
    );
  });

  it('advertises format date-time and one short pattern with its bounds, no combinator', () => {
    expect(z.toJSONSchema(dateTime({ minDate: '1900-01-01' }), { io: 'input' })).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'string',
      format: 'date-time',
      pattern: String.raw`^(?:19|[2-8]).*T\d\d:\d\d:[0-5]\d(\.\d{1,9})?(Z|[+-](0\d|1[0-5]):\d\d)$`,
    });
  });

  it('is judged by format date-time and its pattern exactly as it judges, on generated date-times and bounds', () => {
    const stamp = fc
      .tuple(
        fc.date({ min: new Date('0001-01-02T00:00:00Z'), max: new Date('9999-12-30T00:00:00Z'), noInvalidDate: true }),
        fc.constantFrom('Z', '+15:59', '-15:59', '+16:00', 'z', '+0200', ''),
        fc.constantFrom('T', 't', ' '),
        fc.constantFrom('', '.5', '.1234567890'),
        fc.constantFrom('12:30:00', '23:59:60', '24:00:00'),
      )
      .map(([day, zone, separator, fraction, time]) => `${day.toISOString().slice(0, 10)}${separator}${time}${fraction}${zone}`);
    const bounded = dateTime({ minDate: '1900-01-01', maxDate: '2030-06-15' });
    const judges = [dateTime(), bounded].map((field) => ({ field, judge: ajv.compile(z.toJSONSchema(field, { io: 'input' })) }));
    fc.assert(
      fc.property(stamp, (value) => {
        for (const { field, judge } of judges) expect(problemOf(field, value) === undefined, value).toBe(judge(value));
      }),
      { seed: 12, numRuns: 2_000 },
    );
  });
});

describe('oneOfRequired', () => {
  const input = oneOfRequired(z.strictObject({ item_id: z.int().optional(), item_title: z.string().optional() }), [
    'item_id',
    'item_title',
  ]);

  it('takes either field, or both', () => {
    for (const value of [{ item_id: 1 }, { item_title: 'a' }, { item_id: 1, item_title: 'a' }, { item_id: null, item_title: 'a' }])
      expect(validateInput(input, value, HINT).ok, JSON.stringify(value)).toBe(true);
  });

  it('refuses neither, naming both fields', () => {
    const result = validateInput(input, { item_id: null }, HINT);
    expect(result).toMatchObject({
      ok: false,
      error: {
        message: "Field 'item_id' must be given, or item_title instead, but received neither.",
        details: { fields: [{ field: 'item_id', code: ONE_OF_REQUIRED }] },
      },
    });
  });
});

describe('jsonValue', () => {
  const value = jsonValue({ maxDepth: 2 });

  it('takes any JSON value nested up to its depth', () => {
    for (const accepted of ['x', 1.5, true, null, [], {}, { a: [1, 'b'] }, [[null]], { 'a b': { c: false } }]) {
      expect(problemOf(value, accepted), JSON.stringify(accepted)).toBeUndefined();
    }
  });

  it('refuses deeper nesting, saying how deep it went', () => {
    expect(problemOf(value, { a: { b: [1] } })).toMatchObject({
      message: "Field 'value' must be a JSON value nested at most 2 levels deep, but received one that nests 3.",
    });
  });

  it('advertises its depth in words, with no definitions or references (which model APIs refuse)', () => {
    const schema = z.toJSONSchema(z.strictObject({ value }), { io: 'input' }) as unknown as {
      properties: { value: { description: string } };
    };
    expect(JSON.stringify(schema)).not.toMatch(/"\$(ref|defs)"/);
    expect(schema.properties.value.description).toContain('nested at most 2 levels deep');
  });
});

describe('jsonObject', () => {
  const field = jsonObject({ maxDepth: 2 });
  const schema = z.strictObject({ value: field });
  const parsed = (value: unknown) => validateInput(schema, { value }, HINT);

  it('takes an object, or its JSON text, and gives the tool the object either way', () => {
    const object = { headache: { severity: 3 } };
    expect(parsed(object)).toEqual({ ok: true, value: { value: object } });
    expect(parsed(JSON.stringify(object))).toEqual({ ok: true, value: { value: object } });
    expect(parsed(' {"a": [1, null]} ')).toEqual({ ok: true, value: { value: { a: [1, null] } } });
  });

  it('refuses what is neither, saying so', () => {
    expect(problemOf(field, 42)).toMatchObject({ message: "Field 'value' must be a JSON object, or its JSON text, but received 42." });
    expect(problemOf(field, [1])).toMatchObject({ field: 'value' });
    expect(problemOf(field, 'not json')).toMatchObject({ code: 'invalid_json', message: expect.stringContaining('text that is not JSON') });
    expect(problemOf(field, '[1, 2]')).toMatchObject({
      code: 'invalid_json',
      message: "Field 'value' must be a JSON object, or its JSON text, but received the JSON text of an array.",
    });
  });

  it('holds the text to the rules of the object: depth, storable text, keys, finite numbers', () => {
    expect(problemOf(field, '{"a":{"b":[1]}}')).toMatchObject({ code: 'too_deep', message: expect.stringContaining('one that nests 3') });
    expect(problemOf(field, { a: { b: [1] } })).toMatchObject({ code: 'too_deep', message: expect.stringContaining('one that nests 3') });
    expect(problemOf(field, '{"a":"x\\u0000y"}')).toMatchObject({
      code: 'unsafe_text',
      message: expect.stringContaining("JSON text whose 'a' is text without NUL"),
    });
    expect(problemOf(field, '{"a":"\\ud800"}')).toMatchObject({ code: 'unsafe_text' });
    expect(problemOf(field, '{"a":{"__proto__":1}}')).toMatchObject({
      code: 'forbidden_key',
      message: expect.stringContaining("JSON text whose 'a.__proto__' is a key other than __proto__, constructor, prototype"),
    });
    expect(problemOf(field, '{"a":1e999}')).toMatchObject({ code: 'non_finite_number' });
  });

  it('refuses text that names a key twice in one object, as a request body that does is refused', () => {
    expect(problemOf(field, '{"a":{"b":1,"b":2}}')).toMatchObject({
      code: 'duplicate_key',
      message: expect.stringContaining("text that names 'b' twice in one object"),
    });
    expect(problemOf(field, '{"a":1,"\u0061":2}')).toMatchObject({ code: 'duplicate_key' });
    expect(problemOf(field, '{"a":{"b":1},"c":{"b":2}}')).toBeUndefined();
  });

  it('judges any JSON written as text as it judges the value itself (fast-check)', () => {
    const outcome = (result: ReturnType<typeof parsed>) =>
      result.ok ? JSON.stringify(result.value) : result.error.details!.fields!.map((problem) => problem.code).join();
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })), (object) => {
        expect(outcome(parsed(JSON.stringify(object)))).toEqual(outcome(parsed(object)));
      }),
      { seed: 2026, numRuns: 500 },
    );
  });

  it('advertises both forms, the text as a string of JSON, with no definitions or references', () => {
    const advertised = jsonSchemaOf(field) as { anyOf: Record<string, unknown>[]; description: string };
    expect(advertised.anyOf).toEqual([
      expect.objectContaining({ type: 'object' }),
      expect.objectContaining({ type: 'string', contentMediaType: 'application/json', maxLength: 1024 * 1024 }),
    ]);
    expect(advertised.description).toContain('nested at most 2 levels deep');
    expect(JSON.stringify(advertised)).not.toMatch(/"\$(ref|defs)"/);
    expect(() => ajv.compile(advertised)).not.toThrow();
  });
});
