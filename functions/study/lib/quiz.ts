/** What the quiz tools share: the pass mark, the shape of an attempt, the wrong answers of a topic, and deleting attempts. */
import { sql, type SQL } from 'drizzle-orm';
import * as z from 'zod';
import { text } from '../../../shared/core/fields.ts';
import type { Failure } from '../../../shared/core/contract.ts';
import type { Database } from '../../../shared/core/database.ts';
import { receiptResult, recordReceipt, type Receipt } from '../../../shared/records/receipts.ts';
import { recordId } from './fields.ts';
import { pageOfRows, readCursor, type Page } from './page.ts';
import { isoTime } from './sql.ts';

/** An attempt scoring below this (0 to 1) is wrong; an attempt without a score is not graded, so neither. */
export const PASS_MARK = 0.7;

export const questionField = text({ max: 2_000, blank: false, trim: true });
export const userAnswerField = text({ max: 5_000 });
export const feedbackField = text({ max: 5_000 });

export const attempt = z.object({
  attempt_id: z.int(),
  topic_id: z.int().nullable(),
  question: z.string(),
  user_answer: z.string().nullable(),
  score: z.number().nullable(),
  feedback: z.string().nullable(),
  created_at: z.string(),
});
export type Attempt = z.output<typeof attempt>;

/** The columns of {@link attempt}, from `quiz_attempts a`. */
export const attemptColumns = sql`a.id as attempt_id, a.topic_id, a.question, a.user_answer, a.score, a.feedback, ${isoTime(sql`a.created_at`)} as created_at`;

/** Where a page of wrong answers continues (shared by get-wrong-questions and quiz-pre-fetch). */
const wrongAnswersPosition = z.strictObject({ wrong_before: recordId() });

/**
 * Reads a page of the topic's wrong answers, newest first, from the position a cursor holds. The
 * cursor is bound to the topic and the page size, whichever tool made it (quiz-pre-fetch's
 * continues with get-wrong-questions).
 */
export async function wrongAnswers(
  db: Database,
  projectId: string,
  topicId: number,
  limit: number,
  cursor?: string,
): Promise<Page<Attempt> | Failure> {
  const scope = { topic_id: topicId, limit };
  const from = readCursor(wrongAnswersPosition, cursor, scope);
  if (!from.ok) return from;
  const before = from.value?.wrong_before;
  const { rows } = await db.execute(sql`
    select ${attemptColumns} from quiz_attempts a
    where a.project_id = ${projectId} and a.topic_id = ${topicId} and a.score < ${PASS_MARK}
      ${before === undefined ? sql`` : sql`and a.id < ${before}`}
    order by a.id desc
    limit ${limit + 1}`);
  return pageOfRows(rows as unknown as Attempt[], limit, scope, (last) => ({ wrong_before: last.attempt_id }));
}

/**
 * A statement deleting the project's quiz attempts `a` that match `where`, with a receipt of their
 * ids (`deleted_attempt_ids`), so that a retried attempt of the call recognises what it deleted.
 * It answers one row: `deleted`, the ids it deleted, and `deleted_before`, those an earlier attempt
 * of the call deleted (from its receipt), each in ascending order.
 */
export function deleteAttempts(receipt: Receipt, where: SQL): SQL {
  return sql`
    with gone as (delete from quiz_attempts a where a.project_id = ${receipt.projectId} and ${where} returning a.id),
    receipt as (${recordReceipt(receipt, sql`jsonb_build_object('deleted_attempt_ids', jsonb_agg(id order by id))`, sql`gone having count(*) > 0`)})
    select (select coalesce(json_agg(id order by id), '[]') from gone) as deleted,
           ${deletedByCall(receipt)} as deleted_before`;
}

/** The ids of the quiz attempts the call deleted, from its receipt (a json array, empty when none), as the statement sees it. */
export function deletedByCall(receipt: Receipt): SQL {
  return sql`coalesce(${receiptResult(receipt)}->'deleted_attempt_ids', '[]')`;
}
