import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { ok } from '../../shared/core/contract.ts';
import { nextCursorField } from '../../shared/core/cursor.ts';
import { defineTool } from '../../shared/core/tool.ts';
import { limitField, topicNameField } from './lib/fields.ts';
import { moreNote } from './lib/page.ts';
import { attempt, PASS_MARK, wrongAnswers } from './lib/quiz.ts';
import { reserveIds } from './lib/sql.ts';
import { plural } from '../../shared/core/plural.ts';
import { linkList } from '../../shared/core/links.ts';

/** Before a quiz round: the topic by name (created when new) and what the user got wrong in it before. */
export default defineTool({
  id: 'quiz-pre-fetch',
  toolset: 'study',
  title: 'Prepare a quiz round',
  // Creates the topic the first time a name is used; repeating the call creates nothing more.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  description: `Start a quiz round on topic_name (created if new): its id and earlier wrong answers (below ${PASS_MARK}) to ask again; save the round with quiz-post-save.`,
  get input() {
    return z.strictObject({
      topic_name: topicNameField,
      limit: limitField(20, 100),
    });
  },
  get output() {
    return z.object({
      topic_id: z.int(),
      topic_name: z.string(),
      created: z.boolean().describe('True when this call created the topic.'),
      pass_mark: z.number(),
      wrong_questions: z.array(attempt),
      next_cursor: nextCursorField.describe(
        'When there are more wrong questions: pass it as cursor to get-wrong-questions with this topic_id and the same limit.',
      ),
    });
  },
  example: { topic_name: 'Spanish grammar' },
  async execute({ topic_name, limit }, { db, project, idFor, links }) {
    const requestId = await idFor('topic');
    const sameName = sql`project_id = ${project.id} and lower(name) = lower(${topic_name})`;
    // A topic of that name already there (made by another call, or by this one's earlier attempt) is kept.
    const [, found] = await db.batch([
      db.execute(sql`
        with ids as (${reserveIds(project.id, 'topic', 1, sql`where not exists (select 1 from study_topics where ${sameName})`)})
        insert into study_topics (project_id, id, name, request_id) select ${project.id}::uuid, last_id, ${topic_name}::text, ${requestId}::uuid from ids
        on conflict do nothing`),
      // Created by this call when it carries the call's id: a retried attempt answers created: true too.
      db.execute(
        sql`select id as topic_id, name as topic_name, request_id is not distinct from ${requestId}::uuid as created from study_topics where ${sameName}`,
      ),
    ]);
    const { created, ...topic } = found.rows[0] as { topic_id: number; topic_name: string; created: boolean };
    const page = await wrongAnswers(db, project.id, topic.topic_id, limit);
    if ('ok' in page) return page;
    const name = `topic ${topic.topic_id} "${topic.topic_name}"`;
    const message = created
      ? `Created ${name}: there are no earlier wrong answers to revisit. Ask new questions, then save the round with quiz-post-save.`
      : page.rows.length === 0
        ? `No earlier wrong answers in ${name}. Ask new questions, then save the round with quiz-post-save.`
        : `${plural(page.rows.length, 'earlier wrong answer')} in ${name} to ask again, newest first.${moreNote(page, 'wrong answers', `get them with get-wrong-questions, topic_id ${topic.topic_id}, limit ${limit} and cursor set to next_cursor`)} Save the round with quiz-post-save.`;
    return ok({ ...topic, created, pass_mark: PASS_MARK, wrong_questions: page.rows, next_cursor: page.next_cursor }, message, {
      truncated: page.truncated,
      links: linkList([
        links.record('topic', topic.topic_id, topic.topic_name),
        ...page.rows.map((a) => links.record('quiz_attempt', a.attempt_id, a.question)),
      ]),
    });
  },
});
