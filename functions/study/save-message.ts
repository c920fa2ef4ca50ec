import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { MESSAGE_ROLES } from '../../drizzle/schema.ts';
import { ok } from '../../shared/core/contract.ts';
import { text } from '../../shared/core/fields.ts';
import { defineTool } from '../../shared/core/tool.ts';
import { sessionIdField } from './lib/messages.ts';
import { isoTime, reserveIds } from './lib/sql.ts';
import { linkList } from '../../shared/core/links.ts';

const MAX_CONTENT_CHARS = 20_000;

const savedMessage = z.object({ message_id: z.int(), session_id: z.string(), role: z.enum(MESSAGE_ROLES), created_at: z.string() });

/** Appends one message to a conversation. */
export default defineTool({
  id: 'save-message',
  toolset: 'study',
  title: 'Save a conversation message',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  description: "Append a message to a conversation's memory (the first message creates it). Read it back with get-messages.",
  get input() {
    return z.strictObject({
      session_id: sessionIdField,
      role: z.enum(MESSAGE_ROLES),
      content: text({ max: MAX_CONTENT_CHARS, min: 1 }),
    });
  },
  get output() {
    return savedMessage;
  },
  example: { session_id: 'demo-session', role: 'user', content: 'Quiz me on the Spanish subjunctive, please.' },
  async execute({ session_id, role, content }, { db, project, idFor, links }) {
    const requestId = await idFor('message');
    const [, saved] = await db.batch([
      db.execute(sql`
        with session as (
          insert into chat_sessions (project_id, session_id) values (${project.id}, ${session_id})
          on conflict (project_id, session_id) do update set last_message_at = now()),
        ids as (${reserveIds(project.id, 'message')})
        insert into chat_messages (project_id, id, session_id, role, content, request_id)
        select ${project.id}::uuid, ids.last_id, ${session_id}::text, ${role}::text, ${content}::text, ${requestId}::uuid from ids
        on conflict (project_id, request_id) do nothing`),
      db.execute(sql`select id as message_id, session_id, role, ${isoTime(sql`created_at`)} as created_at
        from chat_messages where project_id = ${project.id} and request_id = ${requestId}`),
    ]);
    const message = saved.rows[0] as z.output<typeof savedMessage>;
    return ok(message, `Saved ${role} message ${message.message_id} in session "${session_id}".`, {
      links: linkList([links.record('message', message.message_id, content)]),
    });
  },
});
