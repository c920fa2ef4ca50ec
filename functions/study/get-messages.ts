import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { MESSAGE_ROLES } from '../../drizzle/schema.ts';
import { ok } from '../../shared/core/contract.ts';
import { cursorField, decodeCursor, nextCursorField } from '../../shared/core/cursor.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { limitField } from './lib/fields.ts';
import { notFound } from './lib/lookup.ts';
import { sessionIdField } from './lib/messages.ts';
import { moreNote, pageOf } from './lib/page.ts';
import { isoTime } from './lib/sql.ts';
import { plural } from '../../shared/core/plural.ts';

const position = z.strictObject({ message_after: z.int().min(1) });

const message = z.object({ message_id: z.int(), role: z.enum(MESSAGE_ROLES), content: z.string(), created_at: z.string() });

/** A conversation's messages in order, a page at a time. */
export default defineTool({
  id: 'get-messages',
  toolset: 'study',
  title: 'Get conversation messages',
  annotations: READ_ONLY,
  description:
    "Read a conversation's saved messages in the order they were saved (oldest first), a page at a time; order newest_first to read the most recent ones first. Use it to recall what was said in an earlier session.",
  input: z.strictObject({
    session_id: sessionIdField,
    order: z.enum(['oldest_first', 'newest_first']).default('oldest_first').describe('oldest_first (default): the conversation in order; newest_first: the latest messages first.'),
    limit: limitField('messages', 50, 200),
    cursor: cursorField.optional(),
  }),
  output: z.object({ session_id: z.string(), messages: z.array(message), next_cursor: nextCursorField }),
  example: { session_id: 'demo-session', limit: 20 },
  async execute({ session_id, order, limit, cursor }, { db, project }) {
    const newestFirst = order === 'newest_first';
    let after: number | undefined;
    if (cursor !== undefined) {
      const decoded = decodeCursor(position, cursor);
      if (!decoded.ok) return decoded;
      after = decoded.value.message_after;
    }
    const [session, messages] = await db.batch([
      db.execute(sql`select 1 from chat_sessions where project_id = ${project.id} and session_id = ${session_id}`),
      db.execute(sql`
        select id as message_id, role, content, ${isoTime(sql`created_at`)} as created_at from chat_messages
        where project_id = ${project.id} and session_id = ${session_id}
          ${after === undefined ? sql`` : newestFirst ? sql`and id < ${after}` : sql`and id > ${after}`}
        order by id ${newestFirst ? sql`desc` : sql`asc`}
        limit ${limit + 1}`),
    ]);
    if (session.rows.length === 0) {
      return notFound(
        'message',
        { session_id },
        `No messages have been saved in session "${session_id}" in this project.`,
        'If the conversation is new, there is no history yet: save messages with save-message. Otherwise ask the user for the right session id.',
      );
    }
    const page = pageOf(messages.rows as unknown as z.output<typeof message>[], limit, (last) => ({ message_after: last.message_id }));
    const text =
      page.rows.length === 0
        ? 'No more messages in this session.'
        : `${plural(page.rows.length, 'message')} of session "${session_id}", ${newestFirst ? 'newest' : 'oldest'} first.${moreNote(page, 'messages')}`;
    return ok({ session_id, messages: page.rows, next_cursor: page.next_cursor }, text, { truncated: page.truncated });
  },
});
