/** What the conversation-memory tools share. */
import * as z from 'zod';
import { INT4, text } from '../../../shared/core/fields.ts';

/**
 * The caller's name for a conversation: any text that identifies it, e.g. "user-42/2025-10-05", or
 * an integer, which names the same conversation as its decimal text (7 and "7" are one session).
 * The tools receive it as text either way.
 */
export const sessionIdField = z
  .union([text({ max: 200, blank: false, trim: true }), z.int().min(0).max(INT4.max).transform(String)], {
    error: `must be the name of the conversation: non-blank text of at most 200 characters, or an integer from 0 to ${INT4.max}`,
  })
  .describe("E.g. user-42; 7 and '7' are one.");
