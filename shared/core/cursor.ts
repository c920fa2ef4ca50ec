/**
 * Opaque pagination cursors. Anything that can grow is paginated: a tool answers `next_cursor` in
 * its data (and `meta.truncated: true`) when there is more, and the caller sends it back as
 * `cursor` to get the next page. What a cursor holds (an offset, the last key seen) is the tool's
 * business; callers only pass it back.
 *
 * A cursor can be bound to the inputs it continues (`scope`): sent back with other inputs (other
 * task ids, another threshold), it is refused instead of silently paging through something else.
 * What a cursor holds is input like any other: screened and checked against its position schema,
 * whose every field is bounded by what the query it feeds can hold ({@link positionIndex}), so a
 * forged cursor is refused as input, never by the database.
 */
import * as z from 'zod';
import { fail, type Failure } from './contract.ts';
import { INT4, text } from './fields.ts';
import { fnv1a } from './fnv1a.ts';
import { base64url } from './hashing.ts';
import { validateInput } from './validation.ts';

/** Cursors are short; anything longer was not made by {@link encodeCursor}. */
const MAX_CURSOR_LENGTH = 1_000;

/** The form of every cursor {@link encodeCursor} makes: base64url, without padding. */
const CURSOR_PATTERN = /^[A-Za-z0-9_-]+$/;

/** The key of a position that holds its scope's fingerprint. */
const SCOPE_KEY = '~';

/**
 * The `cursor` input field of a paginated tool: text of at most 1,000 characters, all its schema
 * says. A cursor is opaque: whether it is one the tool made (its form included), and for these
 * inputs, only the tool can tell ({@link decodeCursor}), a data-dependent refusal with the same
 * VALIDATION_ERROR on the field `cursor`.
 */
export const cursorField = text({ max: MAX_CURSOR_LENGTH });

/** A count or an index held in a cursor's position: an integer from 0 to the largest a query's `integer` takes. */
export const positionIndex = z.int().min(0).max(INT4.max);

/** The `next_cursor` output field: null on the last page. */
export const nextCursorField = z
  .string()
  .nullable()
  .describe('Pass it as cursor (with the same other fields) to get the next page; null when this page is the last.');

/**
 * Encodes a position as an opaque cursor (base64url of its JSON). With `scope` (the inputs the
 * position is relative to), the cursor only decodes with the same scope.
 *
 * @example
 * encodeCursor({ after: 120 })                        // 'eyJhZnRlciI6MTIwfQ'
 * encodeCursor({ after: 120 }, { task_ids, threshold }) // refused later with other task_ids
 */
export function encodeCursor(position: Record<string, unknown>, scope?: unknown): string {
  const value = scope === undefined ? position : { ...position, [SCOPE_KEY]: fingerprint(scope) };
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  return base64url(bytes);
}

export interface DecodeOptions {
  /** The inputs of this call that the cursor must have been made for (as given to encodeCursor). */
  scope?: unknown;
  /** The example of a valid call shown when the cursor is refused. */
  hint?: string;
}

/**
 * Decodes a cursor made by {@link encodeCursor} and checks it against `schema` (the position the
 * tool encodes, screened as every input is: see validateInput) and `scope`. A cursor that is not
 * one, holds a position out of its bounds, or was made for other inputs, answers VALIDATION_ERROR
 * on the field `cursor`.
 */
export function decodeCursor<S extends z.ZodType>(
  schema: S,
  cursor: string,
  { scope, hint }: DecodeOptions = {},
): { ok: true; value: z.output<S> } | Failure {
  let position: unknown;
  try {
    // Only the form encodeCursor writes: atob would also take padding and whitespace.
    if (!CURSOR_PATTERN.test(cursor)) throw new Error('not a cursor');
    const binary = atob(cursor.replace(/-/g, '+').replace(/_/g, '/'));
    position = JSON.parse(
      new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0))),
    );
  } catch {
    position = undefined;
  }
  let scoped: unknown;
  if (typeof position === 'object' && position !== null && SCOPE_KEY in position) {
    ({ [SCOPE_KEY]: scoped, ...position } = position as Record<string, unknown>);
  }
  const parsed = validateInput(schema, position, '');
  if (!parsed.ok) {
    return refused(
      "Field 'cursor' is not a cursor this tool returned. Pass the next_cursor of the previous answer unchanged, or omit cursor to start from the first page.",
      cursor,
      hint,
    );
  }
  if (scope !== undefined && scoped !== fingerprint(scope)) {
    return refused(
      "Field 'cursor' continues a call with other inputs. Send it with the same fields as the call that returned it (only cursor changes), or omit cursor to start from the first page.",
      cursor,
      hint,
    );
  }
  return { ok: true, value: parsed.value };
}

function refused(message: string, cursor: string, hint: string | undefined): Failure {
  return fail('VALIDATION_ERROR', message, {
    hint: hint ?? 'Omit cursor to get the first page.',
    details: {
      fields: [
        {
          field: 'cursor',
          code: 'invalid_cursor',
          message,
          expected: 'a next_cursor from a previous answer',
          received: `'${cursor.slice(0, 60)}'`,
        },
      ],
    },
  });
}

/** A short digest of a JSON value (FNV-1a, 32 bits): enough to tell one call's inputs from another's. */
function fingerprint(value: unknown): string {
  return fnv1a(JSON.stringify(value) ?? '').toString(36);
}
