/** What the conversation-memory tools share. */
import { text } from '../../../shared/core/fields.ts';

/** The caller's name for a conversation: any text that identifies it, e.g. "user-42/2025-10-05". */
export const sessionIdField = text({ max: 200, blank: false, trim: true }).describe('The conversation, named by the caller, e.g. "user-42/2025-10-05".');
