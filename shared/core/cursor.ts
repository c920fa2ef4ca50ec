/**
 * Opaque pagination cursors. Anything that can grow is paginated: a tool answers `next_cursor` in
 * its data (and `meta.truncated: true`) when there is more, and the caller sends it back as
 * `cursor` to get the next page. What a cursor holds (an offset, the last key seen) is the tool's
 * business; callers only pass it back.
 */
import { z } from 'zod';
import { fail, type Failure } from './contract.ts';
import { text } from './fields.ts';

/** Cursors are short; anything longer was not made by {@link encodeCursor}. */
const MAX_CURSOR_LENGTH = 1_000;

/** The `cursor` input field of a paginated tool. */
export const cursorField = text({ max: MAX_CURSOR_LENGTH, min: 1 }).describe("Where to continue: the next_cursor of the previous answer. Optional; omit (or null) for the first page.");

/** The `next_cursor` output field: null on the last page. */
export const nextCursorField = z
  .string()
  .nullable()
  .describe('Pass it as cursor to get the next page; null when this page is the last.');

/**
 * Encodes a position as an opaque cursor (base64url of its JSON).
 *
 * @example
 * encodeCursor({ after: 120 }) // 'eyJhZnRlciI6MTIwfQ'
 */
export function encodeCursor(position: Record<string, unknown>): string {
  const bytes = new TextEncoder().encode(JSON.stringify(position));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * Decodes a cursor made by {@link encodeCursor} and checks it against `schema` (the position the
 * tool encodes). A cursor that is not one answers VALIDATION_ERROR on the field `cursor`.
 */
export function decodeCursor<S extends z.ZodType>(schema: S, cursor: string, hint?: string): { ok: true; value: z.output<S> } | Failure {
  let position: unknown;
  try {
    const binary = atob(cursor.replace(/-/g, '+').replace(/_/g, '/'));
    position = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0))));
  } catch {
    position = undefined;
  }
  const parsed = schema.safeParse(position);
  if (parsed.success) return { ok: true, value: parsed.data };
  const message = "Field 'cursor' is not a cursor this tool returned. Pass the next_cursor of the previous answer unchanged, or omit cursor to start from the first page.";
  return fail('VALIDATION_ERROR', message, {
    hint: hint ?? 'Omit cursor to get the first page.',
    details: { fields: [{ field: 'cursor', code: 'invalid_cursor', message, expected: 'a next_cursor from a previous answer', received: `'${cursor.slice(0, 60)}'` }] },
  });
}
