import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readJsonObject, validateInput } from '../../shared/core/validation.ts';

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
    ['an own __proto__ key', post('{"__proto__":{"x":1}}'), 'VALIDATION_ERROR', "Key '__proto__' is not allowed"],
    ['a prototype key deep in an array', post('{"a":[{"b":{"prototype":1}}]}'), 'VALIDATION_ERROR', "at 'a[0].b.prototype'"],
    ['Infinity', post('{"a":-1e999}'), 'VALIDATION_ERROR', "Field 'a' must be a finite number"],
    ['too deep nesting', post(`{"a":${'['.repeat(100)}${']'.repeat(100)}}`), 'VALIDATION_ERROR', 'nested more than 64 levels'],
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
    const declared = await readJsonObject(post(big, { 'content-type': 'application/json', 'content-length': String(big.length) }), HINT, 1000);
    expect(declared).toMatchObject({ ok: false, error: { code: 'PAYLOAD_TOO_LARGE' } });
    const stream = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(big)); c.close(); } });
    const streamed = await readJsonObject(new Request('http://test/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit), HINT, 1000);
    expect(streamed).toMatchObject({ ok: false, error: { code: 'PAYLOAD_TOO_LARGE' } });
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
    expect(validateInput(schema, { count: 3, ratio: 0.5, name: 'ab' }, HINT)).toEqual({ ok: true, value: { count: 3, ratio: 0.5, name: 'ab' } });
  });

  it('describes each problem with field, code, expected and received', () => {
    const result = validateInput(schema, { count: 15, ratio: 0, name: 'abcdefg', tags: ['a', 'b', 'c'], nested: { deep: 'yes', extra: 1 } }, HINT);
    if (result.ok) throw new Error('expected a failure');
    expect(result.error.details?.fields).toEqual([
      { field: 'count', code: 'too_big', message: "Field 'count' must be between 1 and 10, but received 15.", expected: 'between 1 and 10', received: '15' },
      { field: 'ratio', code: 'too_small', message: "Field 'ratio' must be greater than 0, but received 0.", expected: 'greater than 0', received: '0' },
      { field: 'name', code: 'too_big', message: "Field 'name' must be between 1 and 5 characters, but received 7 characters.", expected: 'between 1 and 5 characters', received: '7 characters' },
      { field: 'tags', code: 'too_big', message: "Field 'tags' must be at most 2 items, but received 3 items.", expected: 'at most 2 items', received: '3 items' },
      { field: 'nested.deep', code: 'invalid_type', message: "Field 'nested.deep' must be true or false, but received a string ('yes').", expected: 'true or false', received: "'yes'" },
      { field: 'nested.extra', code: 'unknown_field', message: "Unknown field 'nested.extra'; allowed fields: deep.", expected: 'one of: deep', received: 'extra' },
    ]);
    expect(result.error.message).toMatch(/^The input has 6 problems: Field 'count' must be between 1 and 10/);
    expect(result.error.hint).toBe(HINT);
  });

  it('lists the allowed fields of an object that a union accepts next to a plain value', () => {
    const items = z.strictObject({ items: z.array(z.union([z.string(), z.strictObject({ title: z.string(), notes: z.string().optional() })])) });
    const result = validateInput(items, { items: ['plain', { title: 'x', note: 'typo' }] }, HINT);
    if (result.ok) throw new Error('expected a failure');
    expect(result.error.details?.fields).toEqual([
      { field: 'items.1.note', code: 'unknown_field', message: "Unknown field 'items.1.note'; allowed fields: title, notes.", expected: 'one of: title, notes', received: 'note' },
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
