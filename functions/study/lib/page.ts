/**
 * One page of a list: queries fetch `limit + 1` rows, so a row beyond the page says that more
 * exist, and the cursor of the next page is made from the last row shown (shared/core/cursor.ts).
 */
import { encodeCursor } from '../../../shared/core/cursor.ts';

export interface Page<R> {
  rows: R[];
  /** Null on the last page. */
  next_cursor: string | null;
  truncated: boolean;
}

/** The first `limit` of `rows` (fetched with limit + 1) and the cursor after the last of them. */
export function pageOf<R>(rows: R[], limit: number, positionAfter: (last: R) => Record<string, unknown>): Page<R> {
  const truncated = rows.length > limit;
  const shown = truncated ? rows.slice(0, limit) : rows;
  return { rows: shown, next_cursor: truncated ? encodeCursor(positionAfter(shown[shown.length - 1]!)) : null, truncated };
}

/** The sentence a paginated answer ends with when there is more: what there is more of, and how to get it. */
export function moreNote(page: Page<unknown>, what: string, how = 'call again with cursor set to next_cursor to get them'): string {
  return page.truncated ? ` More ${what} exist: ${how}.` : '';
}
