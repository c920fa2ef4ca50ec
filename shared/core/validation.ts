/**
 * The one validation layer: request bodies are read with a size limit and parsed; then
 * {@link validateInput} screens the whole input (dangerous keys, non-finite numbers, over-deep
 * nesting, and text Postgres cannot store: NUL characters and unpaired UTF-16 surrogates, in values
 * and keys alike) and checks it against the tool's strict zod schema. Every problem becomes a
 * VALIDATION_ERROR whose messages an LLM can act on, naming the field.
 *
 * What is enforced here is what the tools' input JSON Schemas advertise: the field builders of
 * fields.ts carry each rule into both (the text rules below as `pattern`).
 */
import * as z from 'zod';
import { fail, type FieldError } from './contract.ts';
import { screenInput, type Parsed } from './body.ts';
import { describeIssue, objectOption, unwrap } from './issues.ts';
import { codePointLength, fieldPath, hex, quote, UNSAFE_CHAR } from './text.ts';

/** Nesting deeper than this is refused: no tool needs it, and walking it costs stack. */
const MAX_DEPTH = 64;

/** Keys that could reach an object's prototype when the input is merged or spread somewhere. */
export const FORBIDDEN_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];
const FORBIDDEN_KEY_SET: ReadonlySet<string> = new Set(FORBIDDEN_KEYS);

/**
 * Checks `value` against a tool's schema, after screening all of it (see the module comment). On
 * failure, answers VALIDATION_ERROR with one `fields[]` entry per problem and `hint` as the
 * example of a valid call.
 */
export function validateInput<S extends z.ZodType>(schema: S, value: unknown, hint: string): Parsed<z.output<S>> {
  const object = screenInput(value, hint);
  if (!object.ok) return object;
  const unsafe = findUnsafeValue(value, [], 0);
  if (unsafe) return fail('VALIDATION_ERROR', unsafe.message, { hint, details: { fields: [unsafe] } });

  const result = schema.safeParse(nullMeansAbsent(schema, value), { reportInput: true });
  if (result.success) return { ok: true, value: result.data };
  const fields = result.error.issues.flatMap((issue) => describeIssue(schema, issue));
  const message =
    fields.length === 1 ? fields[0]!.message : `The input has ${fields.length} problems: ${fields.map((f) => f.message).join(' ')}`;
  return fail('VALIDATION_ERROR', message, { hint, details: { fields } });
}

/**
 * Finds the first forbidden key, key or string Postgres cannot store, non-finite number or
 * over-deep nesting in a parsed value, with what was expected and received. `path` is a stack of
 * the keys leading to `value` (empty: the error's field is `(input)`, or a path within `value`).
 */
export function findUnsafeValue(value: unknown, path: (string | number)[] = [], depth = 0): FieldError | undefined {
  if (typeof value === 'string') return unsafeText(value, path, 'value');
  if (typeof value === 'number' && !Number.isFinite(value)) {
    const field = fieldPath(path);
    return {
      field,
      code: 'non_finite_number',
      message: `Field '${field}' must be a finite number, but received a number too large to represent.`,
      expected: 'a finite number',
      received: 'a number too large to represent',
    };
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth >= MAX_DEPTH) {
    const field = fieldPath(path);
    return {
      field,
      code: 'too_deep',
      message: `Field '${field}' is nested more than ${MAX_DEPTH} levels deep; flatten the input.`,
      expected: `nesting at most ${MAX_DEPTH} levels deep`,
      received: 'deeper nesting',
    };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      const found = findUnsafeValue(value[i], path, depth + 1);
      path.pop();
      if (found) return found;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    path.push(key);
    const found = unsafeKey(key, path) ?? findUnsafeValue((value as Record<string, unknown>)[key], path, depth + 1);
    path.pop();
    if (found) return found;
  }
  return undefined;
}

function unsafeKey(key: string, path: (string | number)[]): FieldError | undefined {
  if (!FORBIDDEN_KEY_SET.has(key)) return unsafeText(key, path, 'key');
  const field = fieldPath(path);
  return {
    field,
    code: 'forbidden_key',
    message: `Key '${key}' is not allowed anywhere in the input (at '${field}'); remove it.`,
    expected: `a key other than ${FORBIDDEN_KEYS.join(', ')}`,
    received: quote(key),
  };
}

/** A NUL character or an unpaired surrogate in a string value or key, described; else undefined. */
function unsafeText(text: string, path: (string | number)[], what: 'value' | 'key'): FieldError | undefined {
  const found = UNSAFE_CHAR.exec(text);
  if (!found) return undefined;
  const field = fieldPath(path);
  const code = found[0].charCodeAt(0);
  const character = code === 0 ? 'the NUL character (U+0000)' : `an unpaired UTF-16 surrogate (U+${hex(code)})`;
  const position = codePointLength(text.slice(0, found.index)) + 1;
  const expected = 'text without NUL characters (U+0000) or unpaired UTF-16 surrogates';
  const received = `${quote(text)}, with ${character} at character ${position}`;
  return {
    field,
    code: what === 'key' ? 'unsafe_key' : 'unsafe_text',
    message:
      what === 'key'
        ? `The name of field '${field}' must not contain NUL characters (U+0000) or unpaired UTF-16 surrogates, but it has ${character} at character ${position}; rename or remove it.`
        : `Field '${field}' must be ${expected}, but received ${received}; remove that character.`,
    expected,
    received,
  };
}

/**
 * `null` for an optional field means absent, whatever the field's schema: callers that must send
 * every field (OpenAI strict mode, see shared/http/openai-export.ts) send null for the ones they leave
 * out, and the field's default then applies. (A field whose null must mean something else than
 * absent is required and nullable.) Nested objects follow the same rule; only the objects that
 * change are copied. The input JSON Schemas say so: see {@link nullableOptionalFields}.
 */
function nullMeansAbsent(schema: z.ZodType, value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  // The object option of a union (a title, or { title, notes }) follows the rule too.
  const inner = objectOption(unwrap(schema));
  if (Array.isArray(value)) {
    if (!(inner instanceof z.ZodArray)) return value;
    const element = inner.element as z.ZodType;
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const next = nullMeansAbsent(element, item);
      if (next !== item) (copy ??= [...value])[i] = next;
    }
    return copy ?? value;
  }
  if (!(inner instanceof z.ZodObject)) return value;
  let copy: Record<string, unknown> | undefined;
  // Runs on every call: only nulls and nested objects need the field's schema.
  for (const key of Object.keys(value)) {
    const item: unknown = (value as Record<string, unknown>)[key];
    if (typeof item !== 'object') continue;
    const field = inner.shape[key] as z.ZodType | undefined;
    if (!field) continue; // an unknown field: the strict schema names it
    if (item === null) {
      if (field._zod.optin === undefined) continue;
      copy ??= { ...value };
      delete copy[key];
      continue;
    }
    const next = nullMeansAbsent(field, item);
    if (next !== item) (copy ??= { ...value })[key] = next;
  }
  return copy ?? value;
}

/**
 * The JSON Schema side of {@link nullMeansAbsent}, as a `z.toJSONSchema` override: every optional
 * field of every object (nested ones included) also accepts null, so a standard validator reading
 * the advertised schema accepts what validateInput accepts.
 */
export function nullableOptionalFields(context: { zodSchema: z.core.$ZodTypes; jsonSchema: z.core.JSONSchema.BaseSchema }): void {
  const { zodSchema, jsonSchema } = context;
  if (!(zodSchema instanceof z.ZodObject) || !jsonSchema.properties) return;
  for (const [key, field] of Object.entries(zodSchema.shape as Record<string, z.ZodType>)) {
    const property = jsonSchema.properties[key];
    if (field._zod.optin === undefined || typeof property !== 'object' || acceptsNull(property)) continue;
    const { description, default: fallback, ...rest } = property;
    jsonSchema.properties[key] = {
      ...(description === undefined ? {} : { description }),
      ...(fallback === undefined ? {} : { default: fallback }),
      anyOf: [rest, { type: 'null' }],
    };
  }
}

function acceptsNull(schema: z.core.JSONSchema.BaseSchema): boolean {
  const types = [schema.type].flat();
  return types.includes('null') || (schema.anyOf ?? []).some((option) => typeof option === 'object' && acceptsNull(option));
}
