import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { MESSAGE_ROLES } from '../../drizzle/schema.ts';
import { ok } from '../../shared/core/contract.ts';
import { cursorField, nextCursorField } from '../../shared/core/cursor.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { limitField, recordId } from './lib/fields.ts';
import { sessionIdField } from './lib/messages.ts';
import { moreNote, pageOfRows, readCursor } from './lib/page.ts';
import { isoTime } from './lib/sql.ts';
import { plural } from '../../shared/core/plural.ts';
import { linkList } from '../../shared/core/links.ts';

const position = z.strictObject({ message_after: recordId() });

const message = z.object({ message_id: z.int(), role: z.enum(MESSAGE_ROLES), content: z.string(), created_at: z.string() });

/** A conversation's messages in order, a page at a time. */
export default defineTool({
  id: 'get-messages',
  toolset: 'study',
  title: 'Get conversation messages',
  annotations: READ_ONLY,
  description: "Read a conversation's saved messages, oldest first, to recall an earlier session.",
  get input() {
    return z.strictObject({
      session_id: sessionIdField,
      order: z.enum(['oldest_first', 'newest_first']).default('oldest_first'),
      limit: limitField(50, 200),
      cursor: cursorField.optional(),
    });
  },
  get output() {
    return z.object({ session_id: z.string(), messages: z.array(message), next_cursor: nextCursorField });
  },
  example: { session_id: 'demo-session', limit: 20 },
  async execute({ session_id, order, limit, cursor }, { db, project, links }) {
    const newestFirst = order === 'newest_first';
    const scope = { session_id, order, limit };
    const from = readCursor(position, cursor, scope);
    if (!from.ok) return from;
    const after = from.value?.message_after;
    const { rows } = await db.execute(sql`
      select id as message_id, role, content, ${isoTime(sql`created_at`)} as created_at from chat_messages
      where project_id = ${project.id} and session_id = ${session_id}
        ${after === undefined ? sql`` : newestFirst ? sql`and id < ${after}` : sql`and id > ${after}`}
      order by id ${newestFirst ? sql`desc` : sql`asc`}
      limit ${limit + 1}`);
    const page = pageOfRows(rows as unknown as z.output<typeof message>[], limit, scope, (last) => ({ message_after: last.message_id }));
    const text =
      page.rows.length === 0
        ? after === undefined
          ? `Session "${session_id}" has no messages yet: a new conversation starts empty. Save its messages with save-message as it goes.`
          : 'No more messages in this session.'
        : `${plural(page.rows.length, 'message')} of session "${session_id}", ${newestFirst ? 'newest' : 'oldest'} first.${moreNote(page, 'messages')}`;
    return ok({ session_id, messages: page.rows, next_cursor: page.next_cursor }, text, {
      truncated: page.truncated,
      links: linkList(page.rows.map((row) => links.record('message', row.message_id, row.content))),
    });
  },
});
