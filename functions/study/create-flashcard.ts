import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { createEmptyCard } from 'ts-fsrs';
import { CARD_STATES } from '../../drizzle/schema.ts';
import { ok } from '../../shared/core/contract.ts';
import { text } from '../../shared/core/fields.ts';
import { defineTool } from '../../shared/core/tool.ts';
import { recordId } from './lib/fields.ts';
import { cardStateNames, cardStateValues } from './lib/fsrs.ts';
import { notFound, TOPIC_NEXT } from './lib/lookup.ts';
import { isoTime, reserveIds } from './lib/sql.ts';
import { linkList } from '../../shared/core/links.ts';

const createdCard = z.object({
  card_id: z.int(),
  topic_id: z.int().nullable(),
  front: z.string(),
  back: z.string(),
  due: z.string().describe('When the card is first due: now.'),
  state: z.enum(CARD_STATES),
});

/** Creates a flashcard, new and due at once. */
export default defineTool({
  id: 'create-flashcard',
  toolset: 'study',
  title: 'Create a flashcard',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  description: 'Create a flashcard, due at once; update-flashcard-review schedules its reviews.',
  get input() {
    return z.strictObject({
      front: text({ max: 2_000, blank: false, trim: true }),
      back: text({ max: 5_000, blank: false, trim: true }),
      topic_id: recordId().optional(),
    });
  },
  get output() {
    return createdCard;
  },
  example: { front: 'la biblioteca', back: 'the library', topic_id: 1 },
  async execute({ front, back, topic_id }, { db, project, idFor, links }) {
    const requestId = await idFor('card');
    const card = createEmptyCard(new Date());
    const topicExists =
      topic_id === undefined ? sql`` : sql`where exists (select 1 from study_topics where project_id = ${project.id} and id = ${topic_id})`;
    const [, created] = await db.batch([
      db.execute(sql`
        with ids as (${reserveIds(project.id, 'flashcard', 1, topicExists)})
        insert into flashcards (project_id, id, topic_id, front, back, request_id, ${cardStateNames})
        select ${project.id}::uuid, ids.last_id, ${topic_id ?? null}::int, ${front}::text, ${back}::text, ${requestId}::uuid, ${cardStateValues(card)}
        from ids
        on conflict (project_id, request_id) do nothing`),
      db.execute(sql`select id as card_id, topic_id, front, back, ${isoTime(sql`due`)} as due, state
        from flashcards where project_id = ${project.id} and request_id = ${requestId}`),
    ]);
    const row = created.rows[0] as z.output<typeof createdCard> | undefined;
    if (!row)
      return notFound(
        'topic',
        { topic_id },
        `No topic with id ${topic_id} exists in this project, so the card was not created.`,
        TOPIC_NEXT,
      );
    return ok(row, `Created flashcard ${row.card_id} ("${row.front.slice(0, 60)}"), due now.`, {
      links: linkList([links.record('flashcard', row.card_id, row.front)]),
    });
  },
});
