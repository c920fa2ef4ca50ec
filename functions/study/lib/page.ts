/**
 * One page of a list: queries fetch `limit + 1` rows, so a row beyond the page says that more
 * exist, and the cursor of the next page is made from the last row shown (shared/core/cursor.ts).
 * A cursor is bound to the other inputs of the call that made it (its scope), as every cursor is:
 * sent back with another filter, order or page size, it is refused instead of skipping rows.
 */
import type * as z from 'zod';
import type { Failure } from '../../../shared/core/contract.ts';
import { decodeCursor, encodeCursor } from '../../../shared/core/cursor.ts';

export interface Page<R> {
  rows: R[];
  /** Null on the last page. */
  next_cursor: string | null;
  truncated: boolean;
}

/**
 * The position `cursor` holds (undefined for the first page), checked against `position` and
 * against `scope` (the call's other inputs); a cursor that is neither answers VALIDATION_ERROR.
 */
export function readCursor<S extends z.ZodType>(
  position: S,
  cursor: string | undefined,
  scope: object,
): { ok: true; value: z.output<S> | undefined } | Failure {
  return cursor === undefined ? { ok: true, value: undefined } : decodeCursor(position, cursor, { scope });
}

/**
 * The first `limit` of `rows` (fetched with limit + 1) and the cursor after the last of them,
 * bound to `scope` (the same other inputs as given to {@link readCursor}).
 */
export function pageOfRows<R>(rows: R[], limit: number, scope: object, positionAfter: (last: R) => Record<string, unknown>): Page<R> {
  const truncated = rows.length > limit;
  const shown = truncated ? rows.slice(0, limit) : rows;
  return { rows: shown, next_cursor: truncated ? encodeCursor(positionAfter(shown[shown.length - 1]!), scope) : null, truncated };
}

/** The sentence a paginated answer ends with when there is more: what there is more of, and how to get it. */
export function moreNote(
  page: Page<unknown>,
  what: string,
  how = 'call again with the same fields and cursor set to next_cursor to get them',
): string {
  return page.truncated ? ` More ${what} exist: ${how}.` : '';
}
