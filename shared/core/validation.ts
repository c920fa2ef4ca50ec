/**
 * The one validation layer: request bodies are read with a size limit, parsed, screened for
 * dangerous keys and non-finite numbers, then checked against the tool's strict zod schema.
 * Every problem becomes a VALIDATION_ERROR whose messages an LLM can act on.
 */
import { z } from 'zod';
import { fail, type Failure, type FieldError } from './contract.ts';

/** Bodies above this are refused with PAYLOAD_TOO_LARGE before they are parsed. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

/** Nesting deeper than this is refused: no tool needs it, and walking it costs stack. */
const MAX_DEPTH = 64;

/** Keys that could reach an object's prototype when the input is merged or spread somewhere. */
const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** How much of an offending value is quoted back: enough to recognise it, never a whole input. */
const MAX_QUOTED_CHARS = 60;

export type Parsed<T> = { ok: true; value: T } | Failure;

const JSON_CONTENT_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Reads a request body as a JSON object, refusing wrong content types, bodies over `limitBytes`,
 * malformed JSON, non-objects, forbidden keys and non-finite numbers. Never throws.
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
      `The request must have Content-Type: application/json, but received ${contentType ? `'${quote(contentType)}'` : 'no Content-Type'}.`,
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
 * Screens an input that is already parsed (a JSON body, or MCP tool arguments): it must be an
 * object without `__proto__`/`constructor`/`prototype` keys, non-finite numbers or over-deep nesting.
 */
export function screenInput(value: unknown, hint: string): Parsed<Record<string, unknown>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fail('VALIDATION_ERROR', `The input must be a JSON object, but received ${kindOf(value)}.`, { hint });
  }
  const unsafe = findUnsafeValue(value, '', 0);
  if (unsafe) return fail('VALIDATION_ERROR', unsafe.message, { hint, details: { fields: [unsafe] } });
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

/** Finds the first forbidden key, non-finite number or over-deep nesting in a parsed value. */
function findUnsafeValue(value: unknown, path: string, depth: number): FieldError | undefined {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    return { field: path, code: 'non_finite_number', message: `Field '${path}' must be a finite number, but received a number too large to represent.` };
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth >= MAX_DEPTH) {
    return { field: path, code: 'too_deep', message: `Field '${path}' is nested more than ${MAX_DEPTH} levels deep; flatten the input.` };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnsafeValue(value[i], `${path}[${i}]`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    const field = path ? `${path}.${key}` : key;
    if (FORBIDDEN_KEYS.has(key)) {
      return { field, code: 'forbidden_key', message: `Key '${key}' is not allowed anywhere in the input (at '${field}'); remove it.` };
    }
    const found = findUnsafeValue((value as Record<string, unknown>)[key], field, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * Checks `value` against a tool's schema. On failure, answers VALIDATION_ERROR with one
 * `fields[]` entry per problem and `hint` as the example of a valid call.
 */
export function validateInput<S extends z.ZodType>(schema: S, value: unknown, hint: string): Parsed<z.output<S>> {
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
 * `null` for an optional field means absent, whatever the field's schema: callers that must send
 * every field (OpenAI strict mode, see shared/http/openai-export.ts) send null for the ones they leave
 * out, and the field's default then applies. (A field whose null must mean something else than
 * absent is required and nullable.) Nested objects follow the same rule; only the objects that
 * change are copied.
 */
function nullMeansAbsent(schema: z.ZodType, value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const inner = unwrap(schema);
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

/** Turns one zod issue into field errors (an unknown-keys issue lists several fields). */
function describeIssue(root: z.ZodType, issue: z.core.$ZodIssue): FieldError[] {
  const field = issue.path.map(String).join('.') || '(input)';
  const name = `Field '${field}'`;
  const input = (issue as { input?: unknown }).input;
  const received = render(input);

  switch (issue.code) {
    case 'unrecognized_keys': {
      const allowed = Object.keys(objectShapeAt(root, issue.path)).join(', ');
      return issue.keys.map((key) => {
        const keyPath = [...issue.path.map(String), key].join('.');
        return {
          field: keyPath,
          code: 'unknown_field',
          message: `Unknown field '${keyPath}'; allowed fields: ${allowed}.`,
          expected: `one of: ${allowed}`,
          received: key,
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
        : issue.origin === 'array' && Array.isArray(input) ? `${input.length} items`
        : received;
      return [{ field, code: issue.code, message: `${name} must be ${expected}, but received ${actual}.`, expected, received: actual }];
    }
    case 'invalid_value': {
      const expected = `one of: ${issue.values.map(String).join(', ')}`;
      return [{ field, code: issue.code, message: `${name} must be ${expected}, but received ${received}.`, expected, received }];
    }
    case 'invalid_format': {
      const expected = FORMAT_DESCRIPTIONS[issue.format] ?? `a valid ${issue.format}`;
      return [{ field, code: issue.code, message: `${name} must be ${expected}, but received ${received}.`, expected, received }];
    }
    case 'not_multiple_of': {
      const expected = `a multiple of ${issue.divisor}`;
      return [{ field, code: issue.code, message: `${name} must be ${expected}, but received ${received}.`, expected, received }];
    }
    default:
      // Custom checks carry a message written for the caller already.
      return [{ field, code: issue.code, message: `${name}: ${issue.message}${input === undefined ? '' : ` (received ${received})`}.`, received }];
  }
}

const FORMAT_DESCRIPTIONS: Record<string, string> = {
  datetime: 'an ISO 8601 date-time with a time zone, e.g. 2025-10-05T14:30:00Z or 2025-10-05T16:30:00+02:00',
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
  if (typeof value === 'string') return `'${quote(value)}'`;
  if (typeof value === 'object' && value !== null) return Array.isArray(value) ? `an array of ${value.length} items` : 'an object';
  return String(value);
}

function quote(text: string): string {
  return text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS)}…` : text;
}
