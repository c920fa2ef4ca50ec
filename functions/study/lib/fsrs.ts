/**
 * Flashcard scheduling with FSRS, through ts-fsrs: the card's full FSRS state lives in its row, is
 * handed to the library as a ts-fsrs `Card`, and the library's answer is stored back, so every
 * schedule is exactly the library's. Nothing here schedules on its own.
 *
 * The scheduler uses ts-fsrs's defaults: 90 % requested retention, learning steps 1 min and 10 min,
 * relearning step 10 min, intervals up to 36,500 days, no fuzz (so a review is reproducible).
 */
import { sql, type SQL } from 'drizzle-orm';
import { fsrs, Rating, State, type Card, type Grade } from 'ts-fsrs';
import type { CARD_STATES } from '../../../drizzle/schema.ts';
import { isoTime } from './sql.ts';

export const scheduler = fsrs();

/** The grades of a review, as the tools name them (ts-fsrs `Rating` without Manual). */
export const GRADES = ['again', 'hard', 'good', 'easy'] as const;
export type GradeName = (typeof GRADES)[number];

export const RATING_OF: Record<GradeName, Grade> = { again: Rating.Again, hard: Rating.Hard, good: Rating.Good, easy: Rating.Easy };

type CardState = (typeof CARD_STATES)[number];
const STATE_OF: Record<CardState, State> = { new: State.New, learning: State.Learning, review: State.Review, relearning: State.Relearning };
const NAME_OF: Record<State, CardState> = {
  [State.New]: 'new',
  [State.Learning]: 'learning',
  [State.Review]: 'review',
  [State.Relearning]: 'relearning',
};

/** A flashcard's scheduling state as read by {@link cardStateColumns}. */
export interface CardStateRow {
  due: string;
  stability: number;
  difficulty: number;
  elapsed_days: number;
  scheduled_days: number;
  learning_steps: number;
  reps: number;
  lapses: number;
  state: CardState;
  last_review: string | null;
}

/** The FSRS columns of `flashcards c`, timestamps as ISO text (to the millisecond, as they were written). */
export const cardStateColumns = sql`${isoTime(sql`c.due`)} as due, c.stability, c.difficulty, c.elapsed_days, c.scheduled_days,
  c.learning_steps, c.reps, c.lapses, c.state, ${isoTime(sql`c.last_review`)} as last_review`;

/** The FSRS column names, in the order of {@link cardStateValues}. */
export const cardStateNames = sql`due, stability, difficulty, elapsed_days, scheduled_days, learning_steps, reps, lapses, state, last_review`;

/** A card's row state as the ts-fsrs `Card` it is. */
export function toCard(row: CardStateRow): Card {
  return {
    due: new Date(row.due),
    stability: row.stability,
    difficulty: row.difficulty,
    elapsed_days: row.elapsed_days,
    scheduled_days: row.scheduled_days,
    learning_steps: row.learning_steps,
    reps: row.reps,
    lapses: row.lapses,
    state: STATE_OF[row.state],
    ...(row.last_review === null ? {} : { last_review: new Date(row.last_review) }),
  };
}

/** The state name of a ts-fsrs card. */
export function stateName(card: Card): CardState {
  return NAME_OF[card.state];
}

/** A ts-fsrs `Card` as SQL values, in the order of {@link cardStateNames}. */
export function cardStateValues(card: Card): SQL {
  return sql`${card.due.toISOString()}::timestamptz, ${card.stability}::float8, ${card.difficulty}::float8, ${card.elapsed_days}::int,
    ${card.scheduled_days}::int, ${card.learning_steps}::int, ${card.reps}::int, ${card.lapses}::int, ${stateName(card)}::text,
    ${card.last_review ? card.last_review.toISOString() : null}::timestamptz`;
}

/**
 * What an SM-2 style `ease_factor` means under FSRS. SM-2 multiplies a card's interval by its ease
 * factor after each successful review; FSRS has no ease factor, but after a "good" review at the
 * requested retention R it multiplies the card's stability S (its interval at 90 % retention) by
 *
 *   1 + e^w8 · (11 − D) · S^−w9 · (e^(w10·(1 − R)) − 1)      (ts-fsrs `next_recall_stability`)
 *
 * which depends on the card's difficulty D. So an ease factor sets D: the difficulty at which that
 * growth equals the ease factor, for the card's current stability. D is bounded to [1, 10] as FSRS
 * requires, so a factor beyond what FSRS can give is clipped; {@link easeOf} says what it gives.
 */
export function difficultyForEase(easeFactor: number, stability: number): number {
  const w = scheduler.parameters.w;
  const retention = scheduler.parameters.request_retention;
  const growthPerDifficulty = Math.exp(w[8]!) * Math.pow(stability, -w[9]!) * (Math.exp(w[10]! * (1 - retention)) - 1);
  return Math.min(10, Math.max(1, 11 - (easeFactor - 1) / growthPerDifficulty));
}

/** The ease factor a card has under FSRS: how much a "good" review at the requested retention grows its stability. */
export function easeOf(difficulty: number, stability: number): number {
  return scheduler.next_recall_stability(difficulty, stability, scheduler.parameters.request_retention, Rating.Good) / stability;
}
