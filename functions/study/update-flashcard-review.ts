import { sql } from 'drizzle-orm';
import * as z from 'zod';
import type { Card } from 'ts-fsrs';
import { CARD_STATES, REVIEW_RATINGS } from '../../drizzle/schema.ts';
import { fail, ok } from '../../shared/core/contract.ts';
import { dateTime } from '../../shared/core/fields.ts';
import { linkList, type Links } from '../../shared/core/links.ts';
import { defineTool } from '../../shared/core/tool.ts';
import { recordId } from './lib/fields.ts';
import {
  cardStateColumns,
  cardStateNames,
  cardStateValues,
  difficultyForEase,
  easeOf,
  GRADES,
  RATING_OF,
  scheduler,
  stateName,
  toCard,
  type CardStateRow,
} from './lib/fsrs.ts';
import { notFound } from './lib/lookup.ts';
import { isoTime } from './lib/sql.ts';

const DAY_MS = 86_400_000;

const reviewed = z.object({
  card_id: z.int(),
  review: z.enum(REVIEW_RATINGS).describe('The grade given, or "manual" for explicit overrides.'),
  reviewed_at: z.string(),
  next_review_at: z.string().describe('When the card is due next.'),
  scheduled_days: z.int().describe('Whole days until then (0 while learning, when steps are minutes).'),
  state: z.enum(CARD_STATES),
  stability: z.number().describe('FSRS stability: days until recall probability falls to 90 %.'),
  difficulty: z.number().describe('FSRS difficulty, 1 (easy) to 10 (hard).'),
  reps: z.int(),
  lapses: z.int(),
  ease_factor: z
    .number()
    .nullable()
    .describe('With an ease_factor override: the ease the card now has under FSRS (the one asked for, unless clipped).'),
});
type Reviewed = z.output<typeof reviewed>;

const reviewColumns = sql`r.card_id, r.rating as review, ${isoTime(sql`r.reviewed_at`)} as reviewed_at, ${isoTime(sql`r.due`)} as next_review_at,
  r.scheduled_days, r.state, r.stability, r.difficulty, r.reps, r.lapses, r.ease_factor`;

/** Records a review of a flashcard and schedules the next one with FSRS (ts-fsrs), or applies explicit overrides. */
export default defineTool({
  id: 'update-flashcard-review',
  toolset: 'study',
  title: 'Review a flashcard',
  // It overwrites the card's schedule, and each review moves it on: repeating a review is another review.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  description:
    'Record a flashcard review by grade (FSRS schedules the next), or set next_review_at and ease_factor (SM-2) after a grade or instead of one.',
  get input() {
    return z.strictObject({
      card_id: recordId(),
      grade: z.enum(GRADES).optional().describe('Default good, unless an override is given.'),
      ease_factor: z.number().min(1.3).max(5).optional(),
      next_review_at: dateTime().optional().describe('When it is due next.'),
    });
  },
  get output() {
    return reviewed;
  },
  example: { card_id: 1, grade: 'good' },
  async execute({ card_id, grade: graded, ease_factor, next_review_at }, { db, project, idFor, links }) {
    // Without an override, a review is graded (good unless said); with one, only as asked.
    const grade = graded ?? (ease_factor === undefined && next_review_at === undefined ? 'good' : undefined);
    const requestId = await idFor('review');
    const reviewOfThisCall = sql`select ${reviewColumns} from flashcard_reviews r where r.project_id = ${project.id} and r.request_id = ${requestId}`;
    const { rows } = await db.execute(sql`
      select ${cardStateColumns}, c.revision, (select row_to_json(done) from (${reviewOfThisCall}) done) as done
      from flashcards c where c.project_id = ${project.id} and c.id = ${card_id}`);
    const row = rows[0] as (CardStateRow & { revision: number; done: Reviewed | null }) | undefined;
    if (!row) {
      return notFound(
        'flashcard',
        { card_id },
        `No flashcard with id ${card_id} exists in this project.`,
        'Ask the user which card they mean; get-due-flashcards lists the cards due now with their ids.',
      );
    }
    // A retried attempt of a call whose review was recorded answers with that review.
    if (row.done) return answer(row.done, links);

    const now = new Date();
    const current = toCard(row);
    const next: Card = grade === undefined ? { ...current } : scheduler.next(current, now, RATING_OF[grade]).card;
    let easeFactor: number | null = null;
    if (ease_factor !== undefined) {
      if (next.stability <= 0) {
        return fail(
          'CONFLICT',
          `Flashcard ${card_id} has never been reviewed, so FSRS has no memory state to apply an ease factor to. Give a grade with it (the grade's review comes first), or review it with a grade alone first; next_review_at alone can still reschedule it.`,
          {
            hint: `Call again with a grade as well, e.g. {"card_id": ${card_id}, "grade": "good", "ease_factor": ${ease_factor}}.`,
            details: { entity_type: 'flashcard', query: { card_id }, state: row.state },
          },
        );
      }
      next.difficulty = difficultyForEase(ease_factor, next.stability);
      easeFactor = Math.round(easeOf(next.difficulty, next.stability) * 10_000) / 10_000;
    }
    if (next_review_at !== undefined) {
      next.due = new Date(next_review_at);
      next.scheduled_days = Math.max(0, Math.round((next.due.getTime() - now.getTime()) / DAY_MS));
    }

    // The card changes only if nobody else changed it since it was read (its revision), and only
    // together with the review record that makes a retried attempt recognise this one.
    const [, recorded] = await db.batch([
      db.execute(sql`
        with card as (
          update flashcards set (${cardStateNames}) = (${cardStateValues(next)}), revision = revision + 1
          where project_id = ${project.id} and id = ${card_id} and revision = ${row.revision}
          returning id)
        insert into flashcard_reviews (project_id, card_id, request_id, rating, reviewed_at, due, stability, difficulty, scheduled_days, reps, lapses, state, ease_factor)
        select ${project.id}::uuid, card.id, ${requestId}::uuid, ${grade ?? 'manual'}::text, ${now.toISOString()}::timestamptz, ${next.due.toISOString()}::timestamptz,
               ${next.stability}::float8, ${next.difficulty}::float8, ${next.scheduled_days}::int, ${next.reps}::int, ${next.lapses}::int,
               ${stateName(next)}::text, ${easeFactor}::float8
        from card`),
      db.execute(reviewOfThisCall),
    ]);
    const review = recorded.rows[0] as Reviewed | undefined;
    if (!review) {
      return fail(
        'CONFLICT',
        `Flashcard ${card_id} was changed by another call while this review was being scheduled, so it was not recorded. Repeat the same call: it will schedule from the card's new state.`,
        {
          retryable: true,
          details: { entity_type: 'flashcard', query: { card_id } },
        },
      );
    }
    return answer(review, links);
  },
});

function answer(review: Reviewed, links: Links) {
  const what =
    review.review === 'manual'
      ? `Rescheduled flashcard ${review.card_id}`
      : `Recorded a review of flashcard ${review.card_id}, graded "${review.review}"`;
  return ok(review, `${what}: next review at ${review.next_review_at} (${review.state}).`, {
    links: linkList([links.record('flashcard', review.card_id)]),
  });
}
