/**
 * zod issues, raised by the field builders ({@link refuseValue}) and described for the caller
 * ({@link describeIssue}): each becomes a field error saying what was expected, what was received,
 * and the field's bounds, in words an LLM can act on.
 */
import * as z from 'zod';
import type { FieldError } from './contract.ts';
import { plural } from './plural.ts';
import { fieldPath, kindOf, printable, render } from './text.ts';

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
 * Turns one zod issue into field errors (an unknown-keys issue lists several fields). Long on
 * purpose: one case per zod issue code, so that every message an agent can get reads as one table.
 */
export function describeIssue(root: z.ZodType, issue: z.core.$ZodIssue): FieldError[] {
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
      return [
        {
          field,
          code: issue.code,
          message: `${name} must be ${expected}, but received ${kindOf(input)}${input === null ? '' : ` (${received})`}.`,
          expected,
          received,
        },
      ];
    }
    case 'invalid_union': {
      // A missing field of several forms ("a plan id or 'latest'") is missing, not of no form.
      if (input !== undefined) break;
      const expected = issue.message.startsWith('must be ') ? issue.message.slice('must be '.length) : undefined;
      return [
        {
          field,
          code: 'required',
          message: `${name} is required${expected ? ` (${expected})` : ''}, but it is missing.`,
          ...(expected && { expected }),
        },
      ];
    }
    case 'too_big':
    case 'too_small': {
      const expected = describeBounds(root, issue);
      const actual =
        issue.origin === 'string' && typeof input === 'string'
          ? `${input.length} characters`
          : issue.origin === 'array' && Array.isArray(input)
            ? plural(input.length, 'item')
            : received;
      return [{ field, code: issue.code, message: `${name} must be ${expected}, but received ${actual}.`, expected, received: actual }];
    }
    case 'invalid_value': {
      const expected = `one of: ${issue.values.map(String).join(', ')}`;
      return [{ field, code: issue.code, message: `${name} must be ${expected}, but received ${received}.`, expected, received }];
    }
    case 'invalid_format': {
      // A pattern's own message ("must be ...") says what it expects; zod's default only names the format.
      const expected =
        issue.format === 'regex' && issue.message.startsWith('must be ')
          ? issue.message.slice('must be '.length)
          : (FORMAT_DESCRIPTIONS[issue.format] ?? `a valid ${issue.format}`);
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
    return [
      { field, code: issue.code, message: `${name} ${issue.message}${input === undefined ? '' : `, but received ${received}`}.`, received },
    ];
  }
  return [
    { field, code: issue.code, message: `${name}: ${issue.message}${input === undefined ? '' : ` (received ${received})`}.`, received },
  ];
}

const FORMAT_DESCRIPTIONS: Record<string, string> = {
  date: 'an ISO 8601 date, e.g. 2025-10-05',
  uuid: 'a UUID, e.g. 3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f',
  email: 'an email address',
  url: 'a URL',
};

function describeType(expected: string): string {
  switch (expected) {
    case 'int':
      return 'an integer';
    case 'number':
      return 'a number';
    case 'string':
      return 'a string';
    case 'boolean':
      return 'true or false';
    case 'object':
      return 'an object';
    case 'record':
      return 'a valid JSON object';
    case 'array':
      return 'an array';
    default:
      return expected;
  }
}

/** Describes the allowed range using both bounds of the field, as "between 1 and 10". */
function describeBounds(root: z.ZodType, issue: z.core.$ZodIssueTooBig | z.core.$ZodIssueTooSmall): string {
  const schema = fieldSchemaAt(root, issue.path);
  const noun = issue.origin === 'string' ? 'character' : issue.origin === 'array' ? 'item' : undefined;
  // "at least 1 item", "at most 500 characters", "between 1 and 10 items"; numbers bare.
  const unit = (n: number | bigint) => (noun ? ` ${Number(n) === 1 ? noun : `${noun}s`}` : '');
  let min: number | bigint | null | undefined;
  let max: number | bigint | null | undefined;
  if (schema instanceof z.ZodNumber) [min, max] = [schema.minValue, schema.maxValue];
  // A minimum length of 0 is no bound worth naming: "at most 500 characters".
  else if (schema instanceof z.ZodString) [min, max] = [schema.minLength || undefined, schema.maxLength];
  else if (schema instanceof z.ZodArray)
    [min, max] = [schema._zod.bag.minimum as number | undefined, schema._zod.bag.maximum as number | undefined];
  const finite = (n: number | bigint | null | undefined): n is number | bigint =>
    n !== null && n !== undefined && Number.isFinite(Number(n)) && Math.abs(Number(n)) < Number.MAX_SAFE_INTEGER;
  if (finite(min) && finite(max)) return `between ${min} and ${max}${unit(max)}`;
  if (issue.code === 'too_big') {
    return issue.inclusive === false
      ? `less than ${issue.maximum}${unit(issue.maximum)}`
      : `at most ${issue.maximum}${unit(issue.maximum)}`;
  }
  if (issue.origin === 'string' && Number(issue.minimum) === 1) return 'a non-empty string';
  return issue.inclusive === false
    ? `greater than ${issue.minimum}${unit(issue.minimum)}`
    : `at least ${issue.minimum}${unit(issue.minimum)}`;
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
export function objectOption(schema: z.ZodType | undefined): z.ZodType | undefined {
  if (!(schema instanceof z.ZodUnion)) return schema;
  const objects = (schema.options as z.ZodType[]).map(unwrap).filter((option) => option instanceof z.ZodObject);
  return objects.length === 1 ? objects[0] : schema;
}

function objectShapeAt(root: z.ZodType, path: readonly PropertyKey[]): Record<string, unknown> {
  const schema = objectOption(fieldSchemaAt(root, path));
  return schema instanceof z.ZodObject ? schema.shape : {};
}

/** `schema` without its optional, nullable and default wrappers. */
export function unwrap(schema: z.ZodType): z.ZodType {
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
