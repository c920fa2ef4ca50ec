import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { readJsonObject } from '../../shared/core/body.ts';
import { SAFE_TEXT_PATTERN } from '../../shared/core/text.ts';
import { validateInput } from '../../shared/core/validation.ts';

const HINT = 'Example of a valid call: {}';

function post(body: RequestInit['body'], headers: Record<string, string> = { 'content-type': 'application/json' }) {
  return new Request('http://test/', { method: 'POST', headers, body });
}

describe('readJsonObject', () => {
  it('parses a JSON object', async () => {
    expect(await readJsonObject(post('{"a":1}'), HINT)).toEqual({ ok: true, value: { a: 1 } });
  });

  it('accepts JSON content types with parameters and +json suffixes', async () => {
    for (const contentType of ['application/json; charset=utf-8', 'application/vnd.api+json', 'Application/JSON']) {
      expect((await readJsonObject(post('{}', { 'content-type': contentType }), HINT)).ok).toBe(true);
    }
  });

  it.each([
    ['a wrong content type', post('{}', { 'content-type': 'text/plain' }), 'VALIDATION_ERROR', "received 'text/plain'"],
    ['no content type', post(new TextEncoder().encode('{}'), {}), 'VALIDATION_ERROR', 'received no Content-Type'],
    ['malformed JSON', post('{"a":'), 'VALIDATION_ERROR', 'not valid JSON'],
    ['a string', post('"hi"'), 'VALIDATION_ERROR', 'must be a JSON object, but received a string'],
    ['null', post('null'), 'VALIDATION_ERROR', 'received null'],
    ['an empty body', post(''), 'VALIDATION_ERROR', 'body is empty'],
  ])('refuses %s', async (_case, request, code, message) => {
    const result = await readJsonObject(request, HINT);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.code).toBe(code);
      expect(result.error.message).toContain(message);
      expect(result.error.hint).toBe(HINT);
    }
  });

  it('refuses bodies over the limit by declared length and by actual length', async () => {
    const big = JSON.stringify({ a: 'x'.repeat(2000) });
    const declared = await readJsonObject(
      post(big, { 'content-type': 'application/json', 'content-length': String(big.length) }),
      HINT,
      1000,
    );
    expect(declared).toMatchObject({ ok: false, error: { code: 'PAYLOAD_TOO_LARGE' } });
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    const streamed = await readJsonObject(
      new Request('http://test/', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit),
      HINT,
      1000,
    );
    expect(streamed).toMatchObject({ ok: false, error: { code: 'PAYLOAD_TOO_LARGE' } });
  });
});

describe('validateInput: the screen of the whole input', () => {
  const open = z.strictObject({ a: z.unknown(), b: z.unknown().optional() });
  const refusal = (value: unknown) => {
    const result = validateInput(open, value, HINT);
    if (result.ok) throw new Error(`expected a refusal of ${JSON.stringify(value)}`);
    expect(result.error).toMatchObject({ code: 'VALIDATION_ERROR', hint: HINT });
    return result.error.details!.fields![0]!;
  };

  it.each([
    ['an own __proto__ key', JSON.parse('{"a":{"__proto__":{"x":1}}}'), 'a.__proto__', 'forbidden_key', "Key '__proto__' is not allowed"],
    ['a prototype key deep in an array', { a: [{ b: { prototype: 1 } }] }, 'a[0].b.prototype', 'forbidden_key', "at 'a[0].b.prototype'"],
    ['Infinity', { a: -Infinity }, 'a', 'non_finite_number', "Field 'a' must be a finite number"],
    [
      'too deep nesting',
      { a: JSON.parse(`${'['.repeat(100)}${']'.repeat(100)}`) },
      `a${'[0]'.repeat(63)}`,
      'too_deep',
      'nested more than 64 levels',
    ],
    [
      'a NUL in a value',
      { a: 'x\u0000y' },
      'a',
      'unsafe_text',
      "Field 'a' must be text without NUL characters (U+0000) or unpaired UTF-16 surrogates, but received 'x\\u0000y', with the NUL character (U+0000) at character 2",
    ],
    [
      'a lone high surrogate deep in an array',
      { a: [{ b: ['ok', '\uD83D'] }] },
      'a[0].b[1]',
      'unsafe_text',
      'an unpaired UTF-16 surrogate (U+D83D) at character 1',
    ],
    ['a lone low surrogate after a pair', { a: '😀\uDE00' }, 'a', 'unsafe_text', 'an unpaired UTF-16 surrogate (U+DE00) at character 2'],
    [
      'a NUL in a key',
      { a: { 'k\u0000': 1 } },
      'a.k\\u0000',
      'unsafe_key',
      "The name of field 'a.k\\u0000' must not contain NUL characters",
    ],
    [
      'a lone surrogate in an unknown key',
      { ['\uDC00']: 1 },
      '\\uDC00',
      'unsafe_key',
      'an unpaired UTF-16 surrogate (U+DC00) at character 1',
    ],
  ])('refuses %s, naming the field', (_case, value, field, code, message) => {
    const problem = refusal(value);
    expect(problem).toMatchObject({ field, code });
    expect(problem.message).toContain(message);
  });

  it('keeps well-formed text of every plane, controls and whitespace included', () => {
    const value = { a: { 'clé 😀': ['😀 𝄞 \uFFFF \u2028 \t\n', 'e\u0301'] } };
    expect(validateInput(open, value, HINT)).toEqual({ ok: true, value });
  });

  it('agrees with the advertised text patterns on every string', () => {
    const samples = ['', 'plain', '😀', '\u0000', 'a\uD800', '\uDC00b', '\uD83D\uDE00\uD83D', '\uDBFF\uDFFF', ' \t'];
    for (const text of samples) {
      expect(validateInput(open, { a: text }, HINT).ok, JSON.stringify(text)).toBe(SAFE_TEXT_PATTERN.test(text));
      expect(new RegExp(SAFE_TEXT_PATTERN.source, 'u').test(text), `u flag: ${JSON.stringify(text)}`).toBe(SAFE_TEXT_PATTERN.test(text));
    }
  });

  it('never quotes back an unsafe character or a whole large value', () => {
    const problem = refusal({ a: `${'y'.repeat(59)}\uD83D\uDE00${'z'.repeat(10_000)}\u0000` });
    expect(problem.message.length).toBeLessThan(400);
    expect(problem.message).not.toMatch(/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    expect(problem.message).toContain('at character 10061');
  });

  it('refuses a non-object input before anything else', () => {
    for (const value of [null, [1], 'x', 3])
      expect(validateInput(open, value, HINT)).toMatchObject({ ok: false, error: { code: 'VALIDATION_ERROR' } });
  });
});

describe('validateInput', () => {
  const schema = z.strictObject({
    count: z.int().min(1).max(10),
    ratio: z.number().gt(0),
    name: z.string().min(1).max(5),
    tags: z.array(z.string()).max(2).optional(),
    nested: z.strictObject({ deep: z.boolean() }).optional(),
  });

  it('passes valid input through', () => {
    expect(validateInput(schema, { count: 3, ratio: 0.5, name: 'ab' }, HINT)).toEqual({
      ok: true,
      value: { count: 3, ratio: 0.5, name: 'ab' },
    });
  });

  it('describes each problem with field, code, expected and received', () => {
    const result = validateInput(
      schema,
      { count: 15, ratio: 0, name: 'abcdefg', tags: ['a', 'b', 'c'], nested: { deep: 'yes', extra: 1 } },
      HINT,
    );
    if (result.ok) throw new Error('expected a failure');
    expect(result.error.details?.fields).toEqual([
      {
        field: 'count',
        code: 'too_big',
        message: "Field 'count' must be between 1 and 10, but received 15.",
        expected: 'between 1 and 10',
        received: '15',
      },
      {
        field: 'ratio',
        code: 'too_small',
        message: "Field 'ratio' must be greater than 0, but received 0.",
        expected: 'greater than 0',
        received: '0',
      },
      {
        field: 'name',
        code: 'too_big',
        message: "Field 'name' must be between 1 and 5 characters, but received 7 characters.",
        expected: 'between 1 and 5 characters',
        received: '7 characters',
      },
      {
        field: 'tags',
        code: 'too_big',
        message: "Field 'tags' must be at most 2 items, but received 3 items.",
        expected: 'at most 2 items',
        received: '3 items',
      },
      {
        field: 'nested.deep',
        code: 'invalid_type',
        message: "Field 'nested.deep' must be true or false, but received a string ('yes').",
        expected: 'true or false',
        received: "'yes'",
      },
      {
        field: 'nested.extra',
        code: 'unknown_field',
        message: "Unknown field 'nested.extra'; allowed fields: deep.",
        expected: 'one of: deep',
        received: 'extra',
      },
    ]);
    expect(result.error.message).toMatch(/^The input has 6 problems: Field 'count' must be between 1 and 10/);
    expect(result.error.hint).toBe(HINT);
  });

  it('lists the allowed fields of an object that a union accepts next to a plain value', () => {
    const items = z.strictObject({
      items: z.array(z.union([z.string(), z.strictObject({ title: z.string(), notes: z.string().optional() })])),
    });
    const result = validateInput(items, { items: ['plain', { title: 'x', note: 'typo' }] }, HINT);
    if (result.ok) throw new Error('expected a failure');
    expect(result.error.details?.fields).toEqual([
      {
        field: 'items[1].note',
        code: 'unknown_field',
        message: "Unknown field 'items[1].note'; allowed fields: title, notes.",
        expected: 'one of: title, notes',
        received: 'note',
      },
    ]);
  });

  it('reads null for an optional field as absent, at any depth, so that defaults apply', () => {
    const withDefaults = z.strictObject({
      limit: z.int().min(1).default(20),
      note: z.string().optional(),
      items: z.array(z.strictObject({ key: z.string(), weight: z.number().default(1) })).max(5),
    });
    const input = { limit: null, note: null, items: [{ key: 'a', weight: null }] };
    expect(validateInput(withDefaults, input, HINT)).toEqual({ ok: true, value: { limit: 20, items: [{ key: 'a', weight: 1 }] } });
    expect(input).toEqual({ limit: null, note: null, items: [{ key: 'a', weight: null }] }); // the caller's input is left as it was
  });

  it('still refuses null for a required field', () => {
    const result = validateInput(schema, { count: null, ratio: 0.5, name: 'ab' }, HINT);
    if (result.ok) throw new Error('expected a failure');
    expect(result.error.message).toBe("Field 'count' must be an integer, but received null.");
  });

  it('quotes at most a short prefix of a long value', () => {
    const result = validateInput(z.strictObject({ n: z.number() }), { n: 'y'.repeat(10_000) }, HINT);
    if (result.ok) throw new Error('expected a failure');
    expect(result.error.message.length).toBeLessThan(200);
  });
});
