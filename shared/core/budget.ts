/**
 * Answer budgets: one call never answers megabytes. Every tool's answer fits the budget of its
 * `response_format`; anything that can grow (documents, tasks, relationships, clusters and their
 * members) is cut to the budget and continued with a cursor (shared/core/cursor.ts), and the answer
 * says so (`meta.truncated`, `next_cursor`, the message).
 *
 * Budgets count characters of JSON, which is what an agent reads back (tokens are roughly a
 * quarter of them).
 */
import * as z from 'zod';

export type ResponseFormat = 'concise' | 'detailed';

/** The `response_format` input field of every tool whose answer is more than an id: its values say what they give. */
export const responseFormatField = z.enum(['concise', 'detailed']).default('concise');

/**
 * Characters per answer, by format:
 * - `list`: the listed items of one answer (tasks, relationships, clusters, results, ...);
 * - `content`: document text (get-document-context, `GET /documents/:id`), beyond which further
 *   documents wait for the next page; one chunk of a document always fits (50,000 characters).
 */
export const ANSWER_BUDGETS = {
  concise: { list: 6_000, content: 12_000 },
  detailed: { list: 24_000, content: 50_000 },
} as const satisfies Record<ResponseFormat, { list: number; content: number }>;

/** Characters of `value` as JSON. */
export function jsonLength(value: unknown): number {
  return JSON.stringify(value)?.length ?? 0;
}

export interface FitOptions<T> {
  /** Never fewer items than this (default 1), so that paging advances even past one oversized item. */
  atLeast?: number;
  /**
   * What taking `item` adds to the answer, in characters (default: its JSON and a comma). Called in
   * order, once per item considered, so it may count what the item brings along only once (e.g. a
   * task first named by this item).
   */
  size?: (item: T) => number;
}

/**
 * The longest prefix of `items` whose JSON (with the commas between them) fits in `budget`
 * characters, and never fewer than `atLeast` items.
 *
 * @example
 * const page = fitToBudget(tasks, ANSWER_BUDGETS[response_format].list);
 * const truncated = page.length < tasks.length;
 */
export function fitToBudget<T>(
  items: readonly T[],
  budget: number,
  { atLeast = 1, size = (item) => jsonLength(item) + 1 }: FitOptions<T> = {},
): T[] {
  let used = 0;
  let count = 0;
  for (const item of items) {
    used += size(item);
    if (used > budget && count >= atLeast) break;
    count++;
  }
  return items.slice(0, count);
}
