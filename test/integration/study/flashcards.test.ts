/**
 * The study planner's flashcard tools in workerd. Scheduling is checked against ts-fsrs called
 * directly on the same card state and review time: for every state a card can be in and every
 * grade, the card the tool stores is the card the library computes.
 */
import { sql } from 'drizzle-orm';
import { createEmptyCard, fsrs, Rating, State, type Card, type Grade } from 'ts-fsrs';
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '../helpers.ts';
import { call, data, failure, newTenant, rowCount, type Data, type Tenant } from './helpers.ts';

const MINUTE = 60_000;
const DAY = 86_400_000;

/** The stored FSRS state of a card, read straight from its row. */
async function storedCard(tenant: Tenant, cardId: number): Promise<Data> {
  const { rows } = await db.execute(sql`
    select to_char(due at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as due, stability, difficulty, elapsed_days, scheduled_days,
           learning_steps, reps, lapses, state, to_char(last_review at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as last_review
    from flashcards where project_id = ${tenant.projectId} and id = ${cardId}`);
  return rows[0] as Data;
}

/** Puts a card in the given ts-fsrs state, as if its earlier reviews had led there. */
async function setCard(tenant: Tenant, cardId: number, card: Card): Promise<void> {
  await db.execute(sql`update flashcards set due = ${card.due.toISOString()}, stability = ${card.stability}, difficulty = ${card.difficulty},
    elapsed_days = ${card.elapsed_days}, scheduled_days = ${card.scheduled_days}, learning_steps = ${card.learning_steps}, reps = ${card.reps},
    lapses = ${card.lapses}, state = ${State[card.state].toLowerCase()}, last_review = ${card.last_review?.toISOString() ?? null}
    where project_id = ${tenant.projectId} and id = ${cardId}`);
}

/** A stored card as what it is in ts-fsrs terms, for comparison. */
function asStored(card: Card): Data {
  return {
    due: card.due.toISOString(),
    stability: card.stability,
    difficulty: card.difficulty,
    elapsed_days: card.elapsed_days,
    scheduled_days: card.scheduled_days,
    learning_steps: card.learning_steps,
    reps: card.reps,
    lapses: card.lapses,
    state: State[card.state].toLowerCase(),
    last_review: card.last_review?.toISOString() ?? null,
  };
}

const now = Date.now();
/** One card per state a card can be in, as ts-fsrs describes it. */
const STATES: Record<string, Card> = {
  new: {
    due: new Date(now - 5 * MINUTE),
    stability: 0,
    difficulty: 0,
    elapsed_days: 0,
    scheduled_days: 0,
    learning_steps: 0,
    reps: 0,
    lapses: 0,
    state: State.New,
  },
  learning: {
    due: new Date(now - 2 * MINUTE),
    stability: 2.3065,
    difficulty: 2.11810397,
    elapsed_days: 0,
    scheduled_days: 0,
    learning_steps: 1,
    reps: 1,
    lapses: 0,
    state: State.Learning,
    last_review: new Date(now - 12 * MINUTE),
  },
  review: {
    due: new Date(now - 1 * DAY),
    stability: 12.5,
    difficulty: 5.3,
    elapsed_days: 10,
    scheduled_days: 13,
    learning_steps: 0,
    reps: 6,
    lapses: 1,
    state: State.Review,
    last_review: new Date(now - 14 * DAY),
  },
  relearning: {
    due: new Date(now - 3 * MINUTE),
    stability: 1.2,
    difficulty: 7.8,
    elapsed_days: 0,
    scheduled_days: 0,
    learning_steps: 0,
    reps: 9,
    lapses: 2,
    state: State.Relearning,
    last_review: new Date(now - 13 * MINUTE),
  },
};
const GRADES: [string, Grade][] = [
  ['again', Rating.Again],
  ['hard', Rating.Hard],
  ['good', Rating.Good],
  ['easy', Rating.Easy],
];

describe('create-flashcard and get-due-flashcards', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await newTenant('Flashcards: due');
    await data(tenant, 'quiz-pre-fetch', { topic_name: 'Italian' });
  });

  it('creates a new card, due at once, with the empty FSRS state of ts-fsrs', async () => {
    const before = Date.now();
    const created = await data(tenant, 'create-flashcard', { front: 'il cane', back: 'the dog', topic_id: 1 });
    expect(created).toMatchObject({ card_id: 1, topic_id: 1, front: 'il cane', back: 'the dog', state: 'new' });
    const stored = await storedCard(tenant, 1);
    expect(Date.parse(stored.due)).toBeGreaterThanOrEqual(before - 1);
    expect(stored).toEqual(asStored(createEmptyCard(new Date(stored.due))));
  });

  it('answers NOT_FOUND for an unknown topic, creating nothing', async () => {
    const error = await failure(tenant, 'create-flashcard', { front: 'x', back: 'y', topic_id: 9 }, 404, 'NOT_FOUND');
    expect(error.details).toEqual({ entity_type: 'topic', query: { topic_id: 9 } });
    expect(await rowCount('flashcards', tenant.projectId)).toBe(1);
  });

  it('lists due cards most overdue first; a reviewed card leaves the list until it is due again', async () => {
    await data(tenant, 'create-flashcard', { front: 'il gatto', back: 'the cat' }); // 2
    await data(tenant, 'create-flashcard', { front: 'la casa', back: 'the house', topic_id: 1 }); // 3
    await data(tenant, 'update-flashcard-review', { card_id: 3, next_review_at: new Date(Date.now() - 3 * DAY).toISOString() });
    await data(tenant, 'update-flashcard-review', { card_id: 2, next_review_at: new Date(Date.now() - DAY).toISOString() });
    const due = await data(tenant, 'get-due-flashcards', {});
    expect(due.due_flashcards.map((c: Data) => c.card_id)).toEqual([3, 2, 1]);
    expect(due.due_flashcards[0]).toMatchObject({ front: 'la casa', back: 'the house', topic_id: 1, state: 'new', reps: 0, lapses: 0 });
    expect(due.next_due_at).toBeNull();

    const reviewed = await data(tenant, 'update-flashcard-review', { card_id: 3, grade: 'good' });
    const after = await data(tenant, 'get-due-flashcards', {});
    expect(after.due_flashcards.map((c: Data) => c.card_id)).toEqual([2, 1]);
    expect(after.next_due_at).toBe(reviewed.next_review_at);
    expect((await data(tenant, 'get-due-flashcards', { topic_id: 1 })).due_flashcards.map((c: Data) => c.card_id)).toEqual([1]);
  });

  it('pages through the due cards with a cursor', async () => {
    const first = await data(tenant, 'get-due-flashcards', { limit: 1 });
    const second = await data(tenant, 'get-due-flashcards', { limit: 1, cursor: first.next_cursor });
    expect([first.due_flashcards[0].card_id, second.due_flashcards[0].card_id]).toEqual([2, 1]);
    expect(second.next_cursor).toBeNull();
  });

  it('says when the next card is due when none is due now', async () => {
    const empty = await newTenant('Flashcards: none due');
    await data(empty, 'create-flashcard', { front: 'later', back: 'later' });
    const later = new Date(Date.now() + 2 * DAY).toISOString().replace(/\.\d{3}Z$/, '.000Z');
    await data(empty, 'update-flashcard-review', { card_id: 1, next_review_at: later });
    const { body } = await call(empty, 'get-due-flashcards', {});
    expect(body).toMatchObject({ success: true, data: { due_flashcards: [], next_due_at: later } });
    expect(body.message).toContain(`The next is due at ${later}`);
  });
});

describe('update-flashcard-review schedules exactly as ts-fsrs', () => {
  let tenant: Tenant;
  let nextCard = 0;
  beforeAll(async () => {
    tenant = await newTenant('Flashcards: FSRS');
  });

  describe.each(Object.entries(STATES))('a %s card', (_state, card) => {
    it.each(GRADES)('graded %s', async (grade, rating) => {
      const { card_id } = await data(tenant, 'create-flashcard', { front: `card ${++nextCard}`, back: 'back' });
      await setCard(tenant, card_id, card);
      const reviewed = await data(tenant, 'update-flashcard-review', { card_id, grade });
      // The judge: ts-fsrs itself, on the same state and review time.
      const expected = fsrs().next(card, new Date(reviewed.reviewed_at), rating).card;
      expect(await storedCard(tenant, card_id)).toEqual(asStored(expected));
      expect(reviewed).toEqual({
        card_id,
        review: grade,
        reviewed_at: reviewed.reviewed_at,
        next_review_at: expected.due.toISOString(),
        scheduled_days: expected.scheduled_days,
        state: State[expected.state].toLowerCase(),
        stability: expected.stability,
        difficulty: expected.difficulty,
        reps: expected.reps,
        lapses: expected.lapses,
        ease_factor: null,
      });
    });
  });

  it('schedules a sequence of reviews as ts-fsrs does, review after review', async () => {
    const { card_id } = await data(tenant, 'create-flashcard', { front: 'sequence', back: 'back' });
    let expected: Card = await storedCard(tenant, card_id).then(fromStored);
    for (const [grade, rating] of [GRADES[2]!, GRADES[2]!, GRADES[0]!, GRADES[1]!, GRADES[3]!]) {
      const reviewed = await data(tenant, 'update-flashcard-review', { card_id, grade });
      expected = fsrs().next(expected, new Date(reviewed.reviewed_at), rating).card;
      expect(await storedCard(tenant, card_id)).toEqual(asStored(expected));
    }
    expect(await rowCount('flashcard_reviews', tenant.projectId, sql`card_id = ${card_id}`)).toBe(5);
  });
});

describe('update-flashcard-review overrides', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await newTenant('Flashcards: overrides');
    for (const front of ['one', 'two', 'three', 'four']) await data(tenant, 'create-flashcard', { front, back: 'back' });
    for (const cardId of [1, 2, 3]) await setCard(tenant, cardId, STATES.review!);
  });

  it.each([1.3, 2.5, 5])('sets the FSRS difficulty that gives ease factor %s, as the library computes growth', async (easeFactor) => {
    const cardId = easeFactor === 1.3 ? 1 : easeFactor === 2.5 ? 2 : 3;
    const before = await storedCard(tenant, cardId);
    const reviewed = await data(tenant, 'update-flashcard-review', { card_id: cardId, ease_factor: easeFactor });
    const after = await storedCard(tenant, cardId);
    // Only the difficulty changes: the schedule and the rest of the memory state stay.
    expect({ ...after, difficulty: before.difficulty }).toEqual(before);
    expect(after.difficulty).toBeGreaterThanOrEqual(1);
    expect(after.difficulty).toBeLessThanOrEqual(10);
    // The judge: ts-fsrs's stability after a "good" review at the requested retention, with the stored difficulty.
    const f = fsrs();
    const growth =
      f.next_recall_stability(after.difficulty, after.stability, f.parameters.request_retention, Rating.Good) / after.stability;
    expect(reviewed.ease_factor).toBeCloseTo(growth, 4);
    expect(reviewed).toMatchObject({ review: 'manual', difficulty: after.difficulty, next_review_at: before.due });
    if (after.difficulty > 1 && after.difficulty < 10) expect(growth).toBeCloseTo(easeFactor, 6);
  });

  it('moves the next review to next_review_at, keeping the memory state', async () => {
    const before = await storedCard(tenant, 2);
    const when = '2031-01-15T09:30:00.000Z';
    const reviewed = await data(tenant, 'update-flashcard-review', { card_id: 2, next_review_at: '2031-01-15T10:30:00+01:00' });
    expect(reviewed.next_review_at).toBe(when);
    expect(await storedCard(tenant, 2)).toEqual({ ...before, due: when, scheduled_days: reviewed.scheduled_days });
  });

  it('takes a grade with an override: the graded review first, then the override; no grade and no override means good', async () => {
    const { card_id: cardId } = await data(tenant, 'create-flashcard', { front: 'five', back: 'back' });
    const when = '2032-03-01T08:00:00.000Z';
    const graded = await data(tenant, 'update-flashcard-review', { card_id: cardId, grade: 'hard', next_review_at: when });
    expect(graded).toMatchObject({ card_id: cardId, review: 'hard', next_review_at: when, reps: 1 });
    expect(await storedCard(tenant, cardId)).toMatchObject({ due: when, reps: 1 });
    const plain = await data(tenant, 'update-flashcard-review', { card_id: cardId });
    expect(plain).toMatchObject({ card_id: cardId, review: 'good', reps: 2 });
    expect(await rowCount('flashcard_reviews', tenant.projectId, sql`card_id = ${cardId}`)).toBe(2);
  });

  it('refuses an ease factor for a card never reviewed, with CONFLICT', async () => {
    const error = await failure(tenant, 'update-flashcard-review', { card_id: 4, ease_factor: 2 }, 409, 'CONFLICT');
    expect(error.message).toContain('never been reviewed');
    // The hint says what to do, around the call to send: not a bare JSON object.
    expect(error.hint).toMatch(/^Call again with a grade as well, e\.g\. \{.*"grade": "good".*"ease_factor": 2\}\.$/);
    expect(await storedCard(tenant, 4)).toMatchObject({ state: 'new', difficulty: 0 });
  });

  it.each([
    ['an unknown grade', { card_id: 1, grade: 'perfect' }, 'grade', 'invalid_value'],
    ['an ease factor below 1.3', { card_id: 1, ease_factor: 1 }, 'ease_factor', 'too_small'],
    ['a time without a time zone', { card_id: 1, next_review_at: '2031-01-15T09:30:00' }, 'next_review_at', 'invalid_format'],
    // An instant in year 10000 (a 500 DATABASE_ERROR before: its ISO form is one Postgres refuses).
    ['a time past 9999-12-31 in UTC', { card_id: 1, next_review_at: '9999-12-31T23:59:59-15:59' }, 'next_review_at', 'out_of_range'],
    ['a time before 0001-01-01 in UTC', { card_id: 1, next_review_at: '0001-01-01T00:00:00+01:00' }, 'next_review_at', 'out_of_range'],
  ])('refuses %s, naming the field, and changes nothing', async (_case, input, field, code) => {
    const before = await storedCard(tenant, 1);
    const error = await failure(tenant, 'update-flashcard-review', input, 400, 'VALIDATION_ERROR');
    expect(error.details.fields).toMatchObject([{ field, code }]);
    expect(await storedCard(tenant, 1)).toEqual(before);
  });

  it('takes the last day of year 8999 at any offset, and answers it as it stored it', async () => {
    const reviewed = await data(tenant, 'update-flashcard-review', { card_id: 3, next_review_at: '8999-12-31T23:59:59.999-15:59' });
    expect(reviewed.next_review_at).toBe('9000-01-01T15:58:59.999Z');
    expect((await storedCard(tenant, 3)).due).toBe('9000-01-01T15:58:59.999Z');
  });

  it('answers NOT_FOUND for an unknown card', async () => {
    const error = await failure(tenant, 'update-flashcard-review', { card_id: 77, grade: 'good' }, 404, 'NOT_FOUND');
    expect(error.details).toEqual({ entity_type: 'flashcard', query: { card_id: 77 } });
  });
});

describe('concurrent reviews of one card', () => {
  it('applies each review whole, on the state before it, or refuses it with a retryable CONFLICT', async () => {
    const tenant = await newTenant('Flashcards: concurrent');
    await data(tenant, 'create-flashcard', { front: 'contested', back: 'x' });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => call(tenant, 'update-flashcard-review', { card_id: 1, grade: 'good' })),
    );
    const applied = answers.filter((answer) => answer.body.success);
    for (const refused of answers.filter((answer) => !answer.body.success)) {
      expect(refused).toMatchObject({ status: 409, body: { error: { code: 'CONFLICT', retryable: true } } });
    }
    expect(applied.length).toBeGreaterThanOrEqual(1);
    // No review was lost or computed from a state another one had already changed.
    expect(applied.map((answer) => (answer.body as Data).data.reps).sort()).toEqual(applied.map((_, i) => i + 1));
    expect(await storedCard(tenant, 1)).toMatchObject({ reps: applied.length });
    expect(await rowCount('flashcard_reviews', tenant.projectId)).toBe(applied.length);
  });
});

describe('tenant isolation', () => {
  it("never shows or changes another project's cards", async () => {
    const owner = await newTenant('Flashcards: owner');
    const other = await newTenant('Flashcards: other');
    await data(owner, 'create-flashcard', { front: 'owner one', back: 'x' });
    await data(owner, 'create-flashcard', { front: 'owner secret', back: 'x' }); // card 2: the other project has no card 2
    await data(other, 'create-flashcard', { front: 'other one', back: 'y' }); // the other project's card 1
    const before = [await storedCard(owner, 1), await storedCard(owner, 2)];
    expect((await data(other, 'get-due-flashcards', {})).due_flashcards.map((c: Data) => c.front)).toEqual(['other one']);
    await failure(other, 'update-flashcard-review', { card_id: 2, grade: 'easy' }, 404, 'NOT_FOUND');
    await failure(other, 'update-flashcard-review', { card_id: 2, next_review_at: '2040-01-01T00:00:00Z' }, 404, 'NOT_FOUND');
    expect(await data(other, 'update-flashcard-review', { card_id: 1, grade: 'easy' })).toMatchObject({ card_id: 1, reps: 1 });
    expect([await storedCard(owner, 1), await storedCard(owner, 2)]).toEqual(before);
  });
});

function fromStored(stored: Data): Card {
  return {
    due: new Date(stored.due),
    stability: stored.stability,
    difficulty: stored.difficulty,
    elapsed_days: stored.elapsed_days,
    scheduled_days: stored.scheduled_days,
    learning_steps: stored.learning_steps,
    reps: stored.reps,
    lapses: stored.lapses,
    state: { new: State.New, learning: State.Learning, review: State.Review, relearning: State.Relearning }[stored.state as string]!,
    ...(stored.last_review ? { last_review: new Date(stored.last_review) } : {}),
  };
}
