import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { CARD_STATES } from '../../drizzle/schema.ts';
import { ok } from '../../shared/core/contract.ts';
import { cursorField, nextCursorField } from '../../shared/core/cursor.ts';
import { dateTime } from '../../shared/core/fields.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { limitField, recordId } from './lib/fields.ts';
import { moreNote, pageOfRows, readCursor } from './lib/page.ts';
import { isoTime } from './lib/sql.ts';
import { plural } from '../../shared/core/plural.ts';
import { linkList } from '../../shared/core/links.ts';

const position = z.strictObject({ due_after: dateTime(), card_after: recordId() });

const dueCard = z.object({
  card_id: z.int(),
  topic_id: z.int().nullable(),
  front: z.string(),
  back: z.string(),
  due: z.string(),
  state: z.enum(CARD_STATES),
  reps: z.int().describe('Reviews so far.'),
  lapses: z.int().describe('Times forgotten after being learned.'),
});

/** The cards due now, most overdue first. */
export default defineTool({
  id: 'get-due-flashcards',
  toolset: 'study',
  title: 'Get due flashcards',
  annotations: READ_ONLY,
  description: 'List the flashcards due now, most overdue first; record each answer with update-flashcard-review.',
  get input() {
    return z.strictObject({
      limit: limitField(20, 100),
      topic_id: recordId().optional(),
      cursor: cursorField.optional(),
    });
  },
  get output() {
    return z.object({
      due_flashcards: z.array(dueCard),
      next_due_at: z.string().nullable().describe('When the next card not yet due becomes due; null when none is waiting.'),
      next_cursor: nextCursorField,
    });
  },
  example: { limit: 10 },
  async execute({ limit, topic_id, cursor }, { db, project, links }) {
    const from = readCursor(position, cursor, { limit, topic_id });
    if (!from.ok) return from;
    const after = from.value;
    const now = new Date().toISOString();
    const inTopic = topic_id === undefined ? sql`` : sql`and c.topic_id = ${topic_id}`;
    const [due, upcoming] = await db.batch([
      db.execute(sql`
        select c.id as card_id, c.topic_id, c.front, c.back, ${isoTime(sql`c.due`)} as due, c.state, c.reps, c.lapses
        from flashcards c
        where c.project_id = ${project.id} and c.due <= ${now}::timestamptz ${inTopic}
          ${after ? sql`and (c.due, c.id) > (${after.due_after}::timestamptz, ${after.card_after})` : sql``}
        order by c.due, c.id
        limit ${limit + 1}`),
      db.execute(sql`select ${isoTime(sql`min(c.due)`)} as next_due_at from flashcards c
        where c.project_id = ${project.id} and c.due > ${now}::timestamptz ${inTopic}`),
    ]);
    const page = pageOfRows(due.rows as unknown as z.output<typeof dueCard>[], limit, { limit, topic_id }, (last) => ({
      due_after: last.due,
      card_after: last.card_id,
    }));
    const nextDueAt = (upcoming.rows[0] as { next_due_at: string | null }).next_due_at;
    const scope = topic_id === undefined ? '' : ` in topic ${topic_id}`;
    const message =
      page.rows.length === 0
        ? `No ${after ? 'more ' : ''}flashcards are due now${scope}.${nextDueAt ? ` The next is due at ${nextDueAt}.` : ''}`
        : `${plural(page.rows.length, 'flashcard')} due now${scope}, most overdue first. After each, record the review with update-flashcard-review.${moreNote(page, 'due flashcards')}`;
    return ok({ due_flashcards: page.rows, next_due_at: nextDueAt, next_cursor: page.next_cursor }, message, {
      truncated: page.truncated,
      links: linkList(page.rows.map((card) => links.record('flashcard', card.card_id, card.front))),
    });
  },
});
