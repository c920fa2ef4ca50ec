/** What the conversation-memory tools share. */
import { z } from 'zod';

/** The caller's name for a conversation: any text that identifies it, e.g. "user-42/2025-10-05". */
export const sessionIdField = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .describe('The conversation, named by the caller, e.g. "user-42/2025-10-05". The same session_id reads and writes the same conversation.');
