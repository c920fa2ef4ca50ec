import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { ok } from '../../shared/core/contract.ts';
import { defineTool } from '../../shared/core/tool.ts';
import { recordId } from './lib/fields.ts';
import { notFound, TOPIC_NEXT } from './lib/lookup.ts';
import { attempt, attemptColumns, feedbackField, PASS_MARK, questionField, userAnswerField, type Attempt } from './lib/quiz.ts';
import { reserveIds } from './lib/sql.ts';
import { linkList } from '../../shared/core/links.ts';

/** Records one answered quiz question. */
export default defineTool({
  id: 'save-quiz-attempt',
  toolset: 'study',
  title: 'Save a quiz attempt',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  description: `Record one answered quiz question (a score below ${PASS_MARK} is wrong and comes back for practice); for a whole round, use quiz-post-save.`,
  get input() {
    return z.strictObject({
      topic_id: recordId().optional(),
      question: questionField,
      user_answer: userAnswerField.optional(),
      score: z.number().min(0).max(1).optional().describe('Null: ungraded.'),
      feedback: feedbackField.optional(),
    });
  },
  get output() {
    return attempt.extend({ wrong: z.boolean().nullable().describe(`True when the score is below ${PASS_MARK}; null when ungraded.`) });
  },
  example: { question: 'What is the yo form of "tener" in the present subjunctive?', user_answer: 'tenga', score: 1, feedback: 'Correct.' },
  async execute({ topic_id, question, user_answer, score, feedback }, { db, project, idFor, links }) {
    const requestId = await idFor('attempt');
    // No id is reserved, and nothing inserted, when the topic does not exist in this project.
    const topicExists =
      topic_id === undefined ? sql`` : sql`where exists (select 1 from study_topics where project_id = ${project.id} and id = ${topic_id})`;
    const [, saved] = await db.batch([
      db.execute(sql`
        with ids as (${reserveIds(project.id, 'quiz_attempt', 1, topicExists)})
        insert into quiz_attempts (project_id, id, topic_id, question, user_answer, score, feedback, request_id)
        select ${project.id}::uuid, ids.last_id, ${topic_id ?? null}::int, ${question}::text, ${user_answer ?? null}::text,
               ${score ?? null}::float8, ${feedback ?? null}::text, ${requestId}::uuid
        from ids
        on conflict (project_id, request_id) do nothing`),
      db.execute(sql`select ${attemptColumns} from quiz_attempts a where a.project_id = ${project.id} and a.request_id = ${requestId}`),
    ]);
    const row = saved.rows[0] as Attempt | undefined;
    if (!row)
      return notFound(
        'topic',
        { topic_id },
        `No topic with id ${topic_id} exists in this project, so the attempt was not saved.`,
        TOPIC_NEXT,
      );
    const wrong = row.score === null ? null : row.score < PASS_MARK;
    const verdict = wrong === null ? 'ungraded' : wrong ? `wrong, score ${row.score}` : `right, score ${row.score}`;
    return ok(
      { ...row, wrong },
      `Saved attempt ${row.attempt_id} (${verdict})${row.topic_id === null ? '' : ` under topic ${row.topic_id}`}.`,
      {
        links: linkList([
          links.record('quiz_attempt', row.attempt_id, row.question),
          row.topic_id === null ? undefined : links.record('topic', row.topic_id),
        ]),
      },
    );
  },
});
