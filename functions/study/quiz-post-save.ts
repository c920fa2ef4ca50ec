import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { ok } from '../../shared/core/contract.ts';
import { distinctList } from '../../shared/core/fields.ts';
import { defineTool } from '../../shared/core/tool.ts';
import { integerArray, uuidArray } from '../../shared/core/database.ts';
import { recordId } from './lib/fields.ts';
import { notFound, TOPIC_NEXT } from './lib/lookup.ts';
import { deleteAttempts, deletedByCall, feedbackField, questionField, userAnswerField } from './lib/quiz.ts';
import { reserveIds } from './lib/sql.ts';
import { plural } from '../../shared/core/plural.ts';
import { linkList } from '../../shared/core/links.ts';

const MAX_WRONG = 50;
const MAX_RETRIES = 100;

const wrongAnswer = z.strictObject({
  question: questionField,
  user_answer: userAnswerField,
  feedback: feedbackField.nullish(),
});

/** After a quiz round: saves the wrong answers and clears the earlier wrong ones now answered right, in one transaction. */
export default defineTool({
  id: 'quiz-post-save',
  toolset: 'study',
  title: 'Save a quiz round',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  description: 'End a quiz round, all or nothing: save its wrong answers and delete its correct retries.',
  get input() {
    return z.strictObject({
      topic_id: recordId(),
      wrong_answers: z.array(wrongAnswer).max(MAX_WRONG).default([]),
      correct_retries: distinctList(recordId(), { max: MAX_RETRIES })
        .default([])
        .describe('Earlier wrong attempts (ids from quiz-pre-fetch) now answered correctly. Default none.'),
    });
  },
  get output() {
    return z.object({
      topic_id: z.int(),
      saved_wrong: z.int().describe('How many wrong answers were saved.'),
      deleted_correct: z.int().describe('How many earlier wrong attempts were deleted.'),
      saved_attempt_ids: z.array(z.int()),
      deleted_attempt_ids: z.array(z.int()),
    });
  },
  example: {
    topic_id: 1,
    wrong_answers: [{ question: 'What is the yo form of "hacer" in the preterite?', user_answer: 'hací', feedback: 'It is "hice".' }],
    correct_retries: [3],
  },
  async execute({ topic_id, wrong_answers, correct_retries }, { db, project, idFor, links }) {
    const answerIds = await Promise.all(wrong_answers.map((_, i) => idFor(`wrong:${i}`)));
    const receipt = { id: await idFor('correct'), projectId: project.id };
    const checked = await db.execute(sql`
      select (select name from study_topics where project_id = ${project.id} and id = ${topic_id}) as topic_name,
             (select coalesce(json_agg(id), '[]') from quiz_attempts
              where project_id = ${project.id} and topic_id = ${topic_id} and id = any(${integerArray(correct_retries)})) as present,
             ${deletedByCall(receipt)} as deleted_before`);
    const { topic_name, present, deleted_before } = checked.rows[0] as {
      topic_name: string | null;
      present: number[];
      deleted_before: number[];
    };
    const nothingSaved = 'nothing was saved or deleted';
    if (topic_name === null)
      return notFound('topic', { topic_id }, `No topic with id ${topic_id} exists in this project; ${nothingSaved}.`, TOPIC_NEXT);
    // A retried attempt finds the attempts its first attempt deleted among its receipts.
    const known = new Set([...present, ...deleted_before]);
    const missing = correct_retries.filter((id) => !known.has(id));
    if (missing.length > 0) {
      return notFound(
        'quiz_attempt',
        { topic_id, correct_retries: missing },
        `No attempt ${missing.join(', ')} exists in topic ${topic_id} "${topic_name}"; ${nothingSaved}.`,
        'Use the attempt ids quiz-pre-fetch or get-wrong-questions returned for this topic, or ask the user which questions they answered correctly.',
      );
    }

    if (wrong_answers.length === 0 && correct_retries.length === 0) {
      return ok(
        { topic_id, saved_wrong: 0, deleted_correct: 0, saved_attempt_ids: [], deleted_attempt_ids: [] },
        `Topic ${topic_id} "${topic_name}": nothing to save, since wrong_answers and correct_retries were both empty.`,
        { links: linkList([links.record('topic', topic_id, topic_name)]) },
      );
    }
    const rows = JSON.stringify(
      wrong_answers.map((answer, i) => ({
        i,
        request_id: answerIds[i],
        question: answer.question,
        user_answer: answer.user_answer,
        feedback: answer.feedback ?? null,
      })),
    );
    const writes = [];
    if (wrong_answers.length > 0) {
      writes.push(
        db.execute(sql`
        with ids as (${reserveIds(project.id, 'quiz_attempt', wrong_answers.length)})
        insert into quiz_attempts (project_id, id, topic_id, question, user_answer, score, feedback, request_id)
        select ${project.id}::uuid, ids.last_id - ${wrong_answers.length}::int + 1 + r.i, ${topic_id}::int, r.question, r.user_answer, 0, r.feedback, r.request_id
        from ids, jsonb_to_recordset(${rows}::jsonb) as r(i int, request_id uuid, question text, user_answer text, feedback text)
        on conflict (project_id, request_id) do nothing`),
      );
    }
    if (correct_retries.length > 0) {
      writes.push(db.execute(deleteAttempts(receipt, sql`a.topic_id = ${topic_id} and a.id = any(${integerArray(correct_retries)})`)));
    }
    // Read back what this call saved and deleted: a retried attempt answers what its first attempt did.
    const readBack = db.execute(sql`
      select (select coalesce(json_agg(id order by id), '[]') from quiz_attempts
              where project_id = ${project.id} and request_id = any(${uuidArray(answerIds)})) as saved,
             ${deletedByCall(receipt)} as deleted`);
    // One transaction: the wrong answers and the deletions are saved together, or not at all.
    const statements = [...writes, readBack];
    const results = await db.batch(statements as [(typeof statements)[number], ...typeof statements]);
    const { saved, deleted } = results[writes.length]!.rows[0] as { saved: number[]; deleted: number[] };
    const parts = [
      saved.length > 0 ? `saved ${plural(saved.length, 'wrong answer')}` : '',
      deleted.length > 0 ? `cleared ${plural(deleted.length, 'earlier wrong attempt')} now answered correctly` : '',
    ].filter(Boolean);
    return ok(
      { topic_id, saved_wrong: saved.length, deleted_correct: deleted.length, saved_attempt_ids: saved, deleted_attempt_ids: deleted },
      `Topic ${topic_id} "${topic_name}": ${parts.join(' and ') || 'nothing left to save or clear (the attempts were deleted meanwhile)'}.`,
      { links: linkList([links.record('topic', topic_id, topic_name), ...saved.map((id) => links.record('quiz_attempt', id))]) },
    );
  },
});
