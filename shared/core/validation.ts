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
import { fail, type Failure, type FieldError } from './contract.ts';
import { plural } from './plural.ts';

/** Bodies above this are refused with PAYLOAD_TOO_LARGE before they are parsed. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

/** Nesting deeper than this is refused: no tool needs it, and walking it costs stack. */
const MAX_DEPTH = 64;

/** Keys that could reach an object's prototype when the input is merged or spread somewhere. */
export const FORBIDDEN_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];
const FORBIDDEN_KEY_SET: ReadonlySet<string> = new Set(FORBIDDEN_KEYS);

/** How much of an offending value is quoted back: enough to recognise it, never a whole input. */
const MAX_QUOTED_CHARS = 60;

/** One character of storable text: anything but NUL and unpaired surrogates (a pair is one character). */
const SAFE_CHAR = String.raw`[^\u0000\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF]`;

/**
 * Text Postgres stores faithfully: no NUL (U+0000), no unpaired UTF-16 surrogate. The screen in
 * {@link validateInput} enforces it on every string and key of every input; every text field
 * advertises it as its `pattern`. Written without lookarounds, and means the same with or without
 * the regex `u` flag.
 */
export const SAFE_TEXT_PATTERN = new RegExp(String.raw`^(?:${SAFE_CHAR})*$`);

/** {@link SAFE_TEXT_PATTERN}, with at least one character other than whitespace. Linear time. */
export const NON_BLANK_TEXT_PATTERN = new RegExp(
  String.raw`^\s*(?:[^\s\u0000\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])(?:${SAFE_CHAR})*$`,
);

/** The first NUL or unpaired surrogate in a string (no `u` flag: it sees UTF-16 code units). */
const UNSAFE_CHAR = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Characters shown escaped when text is quoted back: controls and unpaired surrogates. */
const UNPRINTABLE = /[\u0000-\u001F\u007F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export type Parsed<T> = { ok: true; value: T } | Failure;

const JSON_CONTENT_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Reads a request body as a JSON object, refusing wrong content types, bodies over `limitBytes`,
 * malformed JSON and non-objects. What the object holds is screened by {@link validateInput}.
 * Never throws.
 */
export async function readJsonObject(
  request: Request,
  hint: string,
  limitBytes = DEFAULT_BODY_LIMIT_BYTES,
): Promise<Parsed<Record<string, unknown>>> {
  const contentType = request.headers.get('content-type') ?? '';
  if (!JSON_CONTENT_TYPE.test(contentType)) {
    return fail(
      'VALIDATION_ERROR',
      `The request must have Content-Type: application/json, but received ${contentType ? quote(contentType) : 'no Content-Type'}.`,
      { hint },
    );
  }
  const text = await readBody(request, limitBytes);
  if (!text.ok) return text;
  if (text.value.trim() === '') {
    return fail('VALIDATION_ERROR', 'The request body is empty; expected a JSON object with the tool input.', { hint });
  }

  let value: unknown;
  try {
    value = JSON.parse(text.value);
  } catch (error) {
    return fail('VALIDATION_ERROR', `The request body is not valid JSON (${(error as Error).message}). Send one JSON object.`, { hint });
  }
  return screenInput(value, hint);
}

/**
 * Reads a request body as text, or answers PAYLOAD_TOO_LARGE as soon as it (or its declared
 * Content-Length) exceeds `limitBytes`. Never throws.
 */
export async function readBody(request: Request, limitBytes = DEFAULT_BODY_LIMIT_BYTES): Promise<Parsed<string>> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > limitBytes) return tooLarge(declared, limitBytes);
  const text = await readTextWithin(request, limitBytes);
  return text === undefined ? tooLarge(undefined, limitBytes) : { ok: true, value: text };
}

/**
 * Checks that an input already parsed (a JSON body, or MCP tool arguments) is a JSON object; its
 * content is screened by {@link validateInput}.
 */
export function screenInput(value: unknown, hint: string): Parsed<Record<string, unknown>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fail('VALIDATION_ERROR', `The input must be a JSON object, but received ${kindOf(value)}.`, { hint });
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/** Reads the body as text, or returns undefined as soon as it exceeds `limitBytes`. */
async function readTextWithin(request: Request, limitBytes: number): Promise<string | undefined> {
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limitBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

function tooLarge(declared: number | undefined, limitBytes: number): Failure {
  const received = declared === undefined ? 'more than that' : `${declared} bytes`;
  return fail('PAYLOAD_TOO_LARGE', `The request body must be at most ${limitBytes} bytes, but received ${received}.`, {
    hint: 'Send less data in one call: split large inputs over several calls.',
  });
}

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
    fields.length === 1
      ? fields[0]!.message
      : `The input has ${fields.length} problems: ${fields.map((f) => f.message).join(' ')}`;
  return fail('VALIDATION_ERROR', message, { hint, details: { fields } });
}

/**
 * Finds the first forbidden key, key or string Postgres cannot store, non-finite number or
 * over-deep nesting in a parsed value. `path` is a stack of the keys leading to `value`.
 */
function findUnsafeValue(value: unknown, path: (string | number)[], depth: number): FieldError | undefined {
  if (typeof value === 'string') return unsafeText(value, path, 'value');
  if (typeof value === 'number' && !Number.isFinite(value)) {
    const field = fieldPath(path);
    return { field, code: 'non_finite_number', message: `Field '${field}' must be a finite number, but received a number too large to represent.` };
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth >= MAX_DEPTH) {
    const field = fieldPath(path);
    return { field, code: 'too_deep', message: `Field '${field}' is nested more than ${MAX_DEPTH} levels deep; flatten the input.` };
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
  return { field, code: 'forbidden_key', message: `Key '${key}' is not allowed anywhere in the input (at '${field}'); remove it.` };
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
 * What a field builder (fields.ts) says about a value it refuses. Passed as a custom issue's
 * `params` (see {@link refuseValue}) and rendered as "Field 'x' must be {expected}, but received
 * {received}." with `code` as the field error's code.
 */
export interface FieldProblem {
  code: string;
  expected: string;
  received: string;
}

/**
 * Reports `problem` from inside a zod `.check()`: the field is refused with that explanation. The
 * value had the right type (`continue`), so a union with this field as an option reports this
 * problem rather than "matches no option".
 */
export function refuseValue(payload: z.core.ParsePayload<unknown>, problem: FieldProblem): void {
  payload.issues.push({ code: 'custom', message: `must be ${problem.expected}`, input: payload.value, params: problem, continue: true });
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

/** Turns one zod issue into field errors (an unknown-keys issue lists several fields). */
function describeIssue(root: z.ZodType, issue: z.core.$ZodIssue): FieldError[] {
  const field = fieldPath(issue.path);
  const name = `Field '${field}'`;
  const input = (issue as { input?: unknown }).input;
  const received = render(input);

  switch (issue.code) {
    case 'unrecognized_keys': {
      const allowed = Object.keys(objectShapeAt(root, issue.path)).join(', ');
      return issue.keys.map((key) => {
        const keyPath = fieldPath([...issue.path, key]);
        return {
          field: keyPath,
          code: 'unknown_field',
          message: `Unknown field '${keyPath}'; allowed fields: ${allowed}.`,
          expected: `one of: ${allowed}`,
          received: printable(key),
        };
      });
    }
    case 'invalid_type': {
      const fieldSchema = fieldSchemaAt(root, issue.path);
      const expected = describeType(fieldSchema instanceof z.ZodNumber && fieldSchema.isInt ? 'int' : issue.expected);
      if (input === undefined) {
        return [{ field, code: 'required', message: `${name} is required (${expected}), but it is missing.`, expected }];
      }
      return [{ field, code: issue.code, message: `${name} must be ${expected}, but received ${kindOf(input)}${input === null ? '' : ` (${received})`}.`, expected, received }];
    }
    case 'too_big':
    case 'too_small': {
      const expected = describeBounds(root, issue);
      const actual = issue.origin === 'string' && typeof input === 'string' ? `${input.length} characters`
        : issue.origin === 'array' && Array.isArray(input) ? plural(input.length, 'item')
        : received;
      return [{ field, code: issue.code, message: `${name} must be ${expected}, but received ${actual}.`, expected, received: actual }];
    }
    case 'invalid_value': {
      const expected = `one of: ${issue.values.map(String).join(', ')}`;
      return [{ field, code: issue.code, message: `${name} must be ${expected}, but received ${received}.`, expected, received }];
    }
    case 'invalid_format': {
      // A pattern's own message ("must be ...") says what it expects; zod's default only names the format.
      const expected = issue.format === 'regex' && issue.message.startsWith('must be ') ? issue.message.slice('must be '.length) : (FORMAT_DESCRIPTIONS[issue.format] ?? `a valid ${issue.format}`);
      return [{ field, code: issue.code, message: `${name} must be ${expected}, but received ${received}.`, expected, received }];
    }
    case 'not_multiple_of': {
      const expected = `a multiple of ${issue.divisor}`;
      return [{ field, code: issue.code, message: `${name} must be ${expected}, but received ${received}.`, expected, received }];
    }
    case 'custom': {
      const problem = issue.params as FieldProblem | undefined;
      if (problem?.expected !== undefined) {
        const { code, expected, received: actual } = problem;
        return [{ field, code, message: `${name} must be ${expected}, but received ${actual}.`, expected, received: actual }];
      }
      break;
    }
  }
  // Other checks carry a message written for the caller already: "must be ..." reads after the
  // field's name; anything else follows it.
  if (issue.message.startsWith('must ')) {
    return [{ field, code: issue.code, message: `${name} ${issue.message}${input === undefined ? '' : `, but received ${received}`}.`, received }];
  }
  return [{ field, code: issue.code, message: `${name}: ${issue.message}${input === undefined ? '' : ` (received ${received})`}.`, received }];
}

const FORMAT_DESCRIPTIONS: Record<string, string> = {
  date: 'an ISO 8601 date, e.g. 2025-10-05',
  uuid: 'a UUID, e.g. 3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f',
  email: 'an email address',
  url: 'a URL',
};

function describeType(expected: string): string {
  switch (expected) {
    case 'int': return 'an integer';
    case 'number': return 'a number';
    case 'string': return 'a string';
    case 'boolean': return 'true or false';
    case 'object': return 'an object';
    case 'record': return 'a valid JSON object';
    case 'array': return 'an array';
    default: return expected;
  }
}

/** Describes the allowed range using both bounds of the field, as "between 1 and 10". */
function describeBounds(root: z.ZodType, issue: z.core.$ZodIssueTooBig | z.core.$ZodIssueTooSmall): string {
  const schema = fieldSchemaAt(root, issue.path);
  const unit = issue.origin === 'string' ? ' characters' : issue.origin === 'array' ? ' items' : '';
  let min: number | bigint | null | undefined;
  let max: number | bigint | null | undefined;
  if (schema instanceof z.ZodNumber) [min, max] = [schema.minValue, schema.maxValue];
  // A minimum length of 0 is no bound worth naming: "at most 500 characters".
  else if (schema instanceof z.ZodString) [min, max] = [schema.minLength || undefined, schema.maxLength];
  else if (schema instanceof z.ZodArray) [min, max] = [schema._zod.bag.minimum as number | undefined, schema._zod.bag.maximum as number | undefined];
  const finite = (n: number | bigint | null | undefined): n is number | bigint =>
    n !== null && n !== undefined && Number.isFinite(Number(n)) && Math.abs(Number(n)) < Number.MAX_SAFE_INTEGER;
  if (finite(min) && finite(max)) return `between ${min} and ${max}${unit}`;
  if (issue.code === 'too_big') {
    return issue.inclusive === false ? `less than ${issue.maximum}${unit}` : `at most ${issue.maximum}${unit}`;
  }
  if (issue.origin === 'string' && Number(issue.minimum) === 1) return 'a non-empty string';
  return issue.inclusive === false ? `greater than ${issue.minimum}${unit}` : `at least ${issue.minimum}${unit}`;
}

/** The schema of the field at `path`, with optional/default/nullable wrappers removed. */
function fieldSchemaAt(root: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  let schema: z.ZodType | undefined = unwrap(root);
  for (const key of path) {
    schema = objectOption(schema);
    if (schema instanceof z.ZodObject) schema = schema.shape[String(key)] as z.ZodType | undefined;
    else if (schema instanceof z.ZodArray) schema = schema.element as z.ZodType;
    else return undefined;
    schema = schema && unwrap(schema);
  }
  return schema;
}

/** The object option of a union of a value and an object (a title, or { title, notes }); otherwise `schema`. */
function objectOption(schema: z.ZodType | undefined): z.ZodType | undefined {
  if (!(schema instanceof z.ZodUnion)) return schema;
  const objects = (schema.options as z.ZodType[]).map(unwrap).filter((option) => option instanceof z.ZodObject);
  return objects.length === 1 ? objects[0] : schema;
}

function objectShapeAt(root: z.ZodType, path: readonly PropertyKey[]): Record<string, unknown> {
  const schema = objectOption(fieldSchemaAt(root, path));
  return schema instanceof z.ZodObject ? schema.shape : {};
}

function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  while (
    current instanceof z.ZodOptional ||
    current instanceof z.ZodNullable ||
    current instanceof z.ZodDefault ||
    current instanceof z.ZodPrefault
  ) {
    current = current._zod.def.innerType as z.ZodType;
  }
  return current;
}

/**
 * A field's path as callers write it: `task_ids[3]`, `symptoms.headache.severity`. Keys are
 * shortened and escaped like quoted values, so a path never carries what it reports.
 */
function fieldPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += `${text ? '.' : ''}${printable(shorten(String(segment)))}`;
  }
  return text || '(input)';
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number';
  if (typeof value === 'boolean') return 'a boolean';
  return typeof value;
}

/** A short rendering of an offending value: quoted, and cut to a recognisable prefix. */
function render(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'object' && value !== null) return Array.isArray(value) ? `an array of ${plural(value.length, 'item')}` : 'an object';
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
function printable(text: string): string {
  return text.replace(UNPRINTABLE, (character) => `\\u${hex(character.charCodeAt(0))}`);
}

function hex(code: number): string {
  return code.toString(16).toUpperCase().padStart(4, '0');
}
