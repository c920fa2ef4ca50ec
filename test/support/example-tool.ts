import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { ok } from '../../shared/core/contract.ts';
import { text } from '../../shared/core/fields.ts';
import { plural } from '../../shared/core/plural.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';

/** Counts the messages of one conversation. */
export default defineTool({
  id: 'count-messages',
  toolset: 'study',
  title: 'Count the messages of a session',
  annotations: READ_ONLY,
  description: 'Count the messages saved in one conversation, e.g. before get-messages, to know how many pages to expect.',
  get input() {
    return z.strictObject({ session_id: text({ max: 200, blank: false }).describe('The conversation, as save-message named it.') });
  },
  get output() {
    return z.object({ session_id: z.string(), count: z.int() });
  },
  example: { session_id: 'demo-session' },
  async execute({ session_id }, { db, project }) {
    const { rows } = await db.execute(sql`select count(*)::int as count from chat_messages
      where project_id = ${project.id} and session_id = ${session_id}`);
    const { count } = rows[0] as { count: number };
    return ok({ session_id, count }, `Session "${session_id}" has ${plural(count, 'message')}.`);
  },
});
