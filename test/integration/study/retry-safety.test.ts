/**
 * Every study write tool, through the real pipeline in workerd, with its write's answer lost after
 * the database committed it (the fault proxy forwards the statement, then drops the connection or
 * answers 503): the pipeline retries, and the rows are counted. One plan and its items, one
 * attempt, one card, one review applied once, one message; a retried delete answers what it
 * deleted, a retried status change what it changed. Then the same calls repeated with an
 * Idempotency-Key over HTTP: the repeat replays and writes nothing. After every test, another
 * project holding records with the same ids is checked row by row: unchanged.
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { sql } from 'drizzle-orm';
import { createEmptyCard, fsrs, Rating } from 'ts-fsrs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tools } from '../../../functions/registry.ts';
import { createGateway } from '../../../shared/http/app.ts';
import { purgeExpired } from '../../../shared/runtime/idempotency.ts';
import { db } from '../helpers.ts';
import { data, newTenant, rowCount, type Data, type Tenant } from './helpers.ts';

const services = env.TEST_SERVICES;
/** This file's own fault scripts: the proxy keeps them per database name. */
const DATABASE = 'study_retry';
const faultyUrl = services.faultyDatabaseUrl.replace(/\/[^/]*$/, `/${DATABASE}`);
const gateway = createGateway(tools, { retryDelayMs: 10 });

/** Every table holding a project's study records, and the receipts. */
const STUDY_TABLES = [
  'study_counters',
  'study_plans',
  'study_plan_items',
  'study_topics',
  'quiz_attempts',
  'flashcards',
  'flashcard_reviews',
  'chat_sessions',
  'chat_messages',
  'write_receipts',
] as const;

type Fault = 'connection_reset' | 'unavailable';

/** Loses the answer of the next query whose SQL contains `match`, after the database ran and committed it. */
async function loseAnswerOf(match: string, fault: Fault = 'connection_reset'): Promise<void> {
  const response = await fetch(services.faultControlUrl, {
    method: 'POST',
    body: JSON.stringify({ count: 1, fault, when: 'after', match, database: DATABASE }),
  });
  expect(response.status).toBe(200);
}

/** Calls a tool as `tenant` through the gateway, its database behind the fault proxy. */
async function call(tenant: Tenant, toolId: string, input: unknown, idempotencyKey?: string): Promise<{ status: number; body: Data }> {
  const headers: Record<string, string> = { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' };
  if (idempotencyKey !== undefined) headers['idempotency-key'] = `"${idempotencyKey}"`;
  const ctx = createExecutionContext();
  const response = await gateway.fetch(
    new Request(`http://edge-tools.test/tools/${toolId}`, { method: 'POST', headers, body: JSON.stringify(input) }),
    { ...env, DATABASE_URL: faultyUrl },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: response.status, body: (await response.json()) as Data };
}

/** Every study row of the project, each as JSON, in a stable order. */
async function studyRows(projectId: string): Promise<Record<string, unknown[]>> {
  const snapshot: Record<string, unknown[]> = {};
  for (const table of STUDY_TABLES) {
    const { rows } = await db.execute(
      sql`select to_jsonb(t) as row from ${sql.identifier(table)} t where project_id = ${projectId} order by to_jsonb(t)::text`,
    );
    snapshot[table] = rows.map((row) => (row as { row: unknown }).row);
  }
  return snapshot;
}

async function select(query: ReturnType<typeof sql>): Promise<Data[]> {
  return (await db.execute(query)).rows as Data[];
}

/** Writes the same records into a project, so that two projects hold records with the same ids. */
async function seed(tenant: Tenant): Promise<void> {
  await data(tenant, 'write-plan', { title: 'Retry exam', items: ['Read the notes', 'Write a summary'] }); // plan 1, items 1-2
  await data(tenant, 'quiz-pre-fetch', { topic_name: 'Retry topic' }); // topic 1
  for (const question of ['First?', 'Second?', 'Third?'])
    await data(tenant, 'save-quiz-attempt', { topic_id: 1, question, user_answer: '?', score: 0 }); // attempts 1-3
  await data(tenant, 'create-flashcard', { front: 'la tormenta', back: 'the storm', topic_id: 1 }); // card 1
  await data(tenant, 'save-message', { session_id: 'retry-session', role: 'user', content: 'Hello.' }); // message 1
}

let owner: Tenant;
let bystander: Tenant;
let bystanderBefore: Record<string, unknown[]>;

beforeAll(async () => {
  owner = await newTenant('Study retry: owner');
  bystander = await newTenant('Study retry: bystander');
  await seed(owner);
  await seed(bystander);
  bystanderBefore = await studyRows(bystander.projectId);
  expect(Object.values(bystanderBefore).filter((rows) => rows.length === 0).length).toBe(2); // no reviews and no receipts yet
});

afterEach(async () => {
  expect(await studyRows(bystander.projectId)).toEqual(bystanderBefore);
});

/** Expects the call to have succeeded on its second attempt, after the first one's answer was lost. */
function expectRetried(answer: { status: number; body: Data }): Data {
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ success: true, meta: { attempts: 2 } });
  expect(answer.status).toBe(200);
  return answer.body.data;
}

describe('a study write retried after its answer was lost writes once', () => {
  it('write-plan: one plan, its items once, the ids the answer gives', async () => {
    await loseAnswerOf('insert into study_plans');
    const answer = expectRetried(
      await call(owner, 'write-plan', { title: 'Lost plan', items: ['One', { title: 'Two', due_date: '2027-01-02' }, 'Three'] }),
    );

    const plans = await select(sql`select id from study_plans where project_id = ${owner.projectId} and title = 'Lost plan'`);
    expect(plans).toEqual([{ id: answer.created_plan_id }]);
    const items = await select(
      sql`select id, title from study_plan_items where project_id = ${owner.projectId} and plan_id = ${answer.created_plan_id} order by position`,
    );
    expect(items).toEqual([
      { id: answer.item_ids[0], title: 'One' },
      { id: answer.item_ids[1], title: 'Two' },
      { id: answer.item_ids[2], title: 'Three' },
    ]);
    expect(answer.item_count).toBe(3);
  });

  it('add-plan-item: one item, at the end of the plan', async () => {
    await loseAnswerOf('insert into study_plan_items', 'unavailable');
    const answer = expectRetried(await call(owner, 'add-plan-item', { plan_id: 1, title: 'Added after a lost answer' }));

    const items = await select(
      sql`select id, title from study_plan_items where project_id = ${owner.projectId} and plan_id = 1 order by position`,
    );
    expect(items).toEqual([
      { id: 1, title: 'Read the notes' },
      { id: 2, title: 'Write a summary' },
      { id: answer.item_id, title: 'Added after a lost answer' },
    ]);
  });

  it('update-item-status: the status set once, and the answer says what it changed', async () => {
    await loseAnswerOf('update study_plan_items');
    const answer = expectRetried(await call(owner, 'update-item-status', { item_id: 1, status: 'completed' }));

    expect(answer).toEqual({
      item_id: 1,
      title: 'Read the notes',
      plan_id: 1,
      status: 'completed',
      previous_status: 'pending',
      changed: true,
    });
    expect(await select(sql`select status from study_plan_items where project_id = ${owner.projectId} and id = 1`)).toEqual([
      { status: 'completed' },
    ]);
    // Another call setting the same status again changes nothing, and says so.
    expect(await data(owner, 'update-item-status', { item_id: 1, status: 'completed' })).toMatchObject({
      previous_status: 'completed',
      changed: false,
    });
  });

  it('update-plan-status: the status set once, and the answer says what it changed', async () => {
    await loseAnswerOf('update study_plans', 'unavailable');
    const retried = await call(owner, 'update-plan-status', { plan_id: 1, status: 'paused' });
    expect(expectRetried(retried)).toEqual({ plan_id: 1, title: 'Retry exam', status: 'paused', previous_status: 'active', changed: true });
    expect(retried.body.message).toBe('Marked plan 1 "Retry exam" paused (it was active).');
    expect(await select(sql`select status from study_plans where project_id = ${owner.projectId} and id = 1`)).toEqual([
      { status: 'paused' },
    ]);
  });

  it('save-quiz-attempt: one attempt', async () => {
    await loseAnswerOf('insert into quiz_attempts');
    const answer = expectRetried(
      await call(owner, 'save-quiz-attempt', { topic_id: 1, question: 'Saved after a lost answer?', user_answer: 'Yes', score: 1 }),
    );

    expect(
      await select(
        sql`select id, score from quiz_attempts where project_id = ${owner.projectId} and question = 'Saved after a lost answer?'`,
      ),
    ).toEqual([{ id: answer.attempt_id, score: 1 }]);
  });

  it('delete-quiz-attempt: answers what it deleted, not NOT_FOUND', async () => {
    const before = await rowCount('quiz_attempts', owner.projectId);
    await loseAnswerOf('delete from quiz_attempts');
    const answer = expectRetried(await call(owner, 'delete-quiz-attempt', { attempt_id: 3 }));

    expect(answer).toEqual({ deleted_attempt_id: 3 });
    expect(await rowCount('quiz_attempts', owner.projectId, sql`id = 3`)).toBe(0);
    expect(await rowCount('quiz_attempts', owner.projectId)).toBe(before - 1);
    // A new call for the same attempt is another call: the attempt is gone.
    expect((await call(owner, 'delete-quiz-attempt', { attempt_id: 3 })).status).toBe(404);
  });

  it('quiz-pre-fetch: one topic, and the answer says this call created it', async () => {
    await loseAnswerOf('insert into study_topics', 'unavailable');
    const answer = expectRetried(await call(owner, 'quiz-pre-fetch', { topic_name: 'Topic after a lost answer' }));

    expect(answer).toMatchObject({ topic_name: 'Topic after a lost answer', created: true, wrong_questions: [] });
    expect(
      await select(sql`select id from study_topics where project_id = ${owner.projectId} and lower(name) = 'topic after a lost answer'`),
    ).toEqual([{ id: answer.topic_id }]);
    // Another call finds the topic: it did not create it.
    expect(await data(owner, 'quiz-pre-fetch', { topic_name: 'TOPIC AFTER A LOST ANSWER' })).toMatchObject({
      topic_id: answer.topic_id,
      created: false,
    });
  });

  it('quiz-post-save: the wrong answers saved once, the corrected attempts deleted once, in one transaction', async () => {
    await loseAnswerOf('delete from quiz_attempts');
    const answer = expectRetried(
      await call(owner, 'quiz-post-save', {
        topic_id: 1,
        wrong_answers: [
          { question: 'Round question 1?', user_answer: 'a' },
          { question: 'Round question 2?', user_answer: 'b', feedback: 'No.' },
        ],
        correct_retries: [1, 2],
      }),
    );

    expect(answer).toMatchObject({ topic_id: 1, saved_wrong: 2, deleted_correct: 2, deleted_attempt_ids: [1, 2] });
    const saved = await select(
      sql`select id from quiz_attempts where project_id = ${owner.projectId} and question like 'Round question %' order by id`,
    );
    expect(saved.map((row) => row.id)).toEqual(answer.saved_attempt_ids);
    expect(saved).toHaveLength(2);
    expect(await rowCount('quiz_attempts', owner.projectId, sql`id in (1, 2)`)).toBe(0);
  });

  it('create-flashcard: one card', async () => {
    await loseAnswerOf('insert into flashcards');
    const answer = expectRetried(await call(owner, 'create-flashcard', { front: 'el relámpago', back: 'the lightning' }));

    expect(await select(sql`select id, state from flashcards where project_id = ${owner.projectId} and front = 'el relámpago'`)).toEqual([
      { id: answer.card_id, state: 'new' },
    ]);
  });

  it('update-flashcard-review: the review applied once, as ts-fsrs schedules one review', async () => {
    await loseAnswerOf('update flashcards set', 'unavailable');
    const answer = expectRetried(await call(owner, 'update-flashcard-review', { card_id: 1, grade: 'good' }));

    // One "good" review of a new card, as the library computes it at the recorded review time.
    const expected = fsrs().next(createEmptyCard(new Date(answer.reviewed_at)), new Date(answer.reviewed_at), Rating.Good).card;
    expect(answer).toMatchObject({ card_id: 1, review: 'good', reps: 1, state: 'learning', next_review_at: expected.due.toISOString() });
    const [card] = await select(sql`select reps, state, revision from flashcards where project_id = ${owner.projectId} and id = 1`);
    expect(card).toEqual({ reps: 1, state: 'learning', revision: 1 });
    expect(await rowCount('flashcard_reviews', owner.projectId, sql`card_id = 1`)).toBe(1);
  });

  it('save-message: one message', async () => {
    await loseAnswerOf('insert into chat_messages');
    const answer = expectRetried(
      await call(owner, 'save-message', { session_id: 'retry-session', role: 'assistant', content: 'Said once.' }),
    );

    expect(
      await select(
        sql`select id from chat_messages where project_id = ${owner.projectId} and session_id = 'retry-session' and content = 'Said once.'`,
      ),
    ).toEqual([{ id: answer.message_id }]);
    expect(await rowCount('chat_messages', owner.projectId, sql`session_id = 'retry-session'`)).toBe(2);
  });
});

describe('a study write repeated with an Idempotency-Key replays its answer and writes nothing', () => {
  let keyed: Tenant;
  beforeAll(async () => {
    keyed = await newTenant('Study retry: keyed');
    await seed(keyed);
  });

  it.each([
    ['write-plan', { title: 'Keyed plan', items: ['Only once'] }],
    ['add-plan-item', { plan_id: 'latest', title: 'Keyed item' }],
    ['update-item-status', { item_id: 2, status: 'in_progress' }],
    ['update-plan-status', { plan_title: 'Retry exam', status: 'completed' }],
    ['save-quiz-attempt', { topic_id: 1, question: 'Keyed question?', score: 0.2 }],
    ['delete-quiz-attempt', { attempt_id: 3 }],
    ['quiz-pre-fetch', { topic_name: 'Keyed topic' }],
    ['quiz-post-save', { topic_id: 1, wrong_answers: [{ question: 'Keyed round?', user_answer: 'x' }], correct_retries: [1] }],
    ['create-flashcard', { front: 'keyed front', back: 'keyed back' }],
    ['update-flashcard-review', { card_id: 1, grade: 'hard' }],
    ['save-message', { session_id: 'keyed-session', role: 'user', content: 'Keyed message.' }],
  ])('%s', async (toolId, input) => {
    const key = crypto.randomUUID();
    const first = await call(keyed, toolId, input, key);
    expect(first.body, JSON.stringify(first.body)).toMatchObject({ success: true });
    const written = await studyRows(keyed.projectId);

    const again = await call(keyed, toolId, input, key);
    expect(again.status).toBe(200);
    expect(again.body.meta).toMatchObject({ replayed: true, trace_id: first.body.meta.trace_id, attempts: 0 });
    expect(again.body.data).toEqual(first.body.data);
    expect(again.body.message).toBe(first.body.message);
    expect(await studyRows(keyed.projectId)).toEqual(written);
  });
});

describe('study receipts', () => {
  it('are purged with the other write receipts once older than a day', async () => {
    const oldCall = await call(owner, 'delete-quiz-attempt', {
      attempt_id: (await data(owner, 'save-quiz-attempt', { question: 'Purged receipt?' })).attempt_id,
    });
    expect(oldCall.status).toBe(200);
    const freshCall = await call(owner, 'delete-quiz-attempt', {
      attempt_id: (await data(owner, 'save-quiz-attempt', { question: 'Kept receipt?' })).attempt_id,
    });
    expect(freshCall.status).toBe(200);
    const receipts = async (attemptId: number) =>
      rowCount('write_receipts', owner.projectId, sql`result->'deleted_attempt_ids' = ${JSON.stringify([attemptId])}::jsonb`);
    expect(await receipts(oldCall.body.data.deleted_attempt_id)).toBe(1);
    expect(await receipts(freshCall.body.data.deleted_attempt_id)).toBe(1);

    await db.execute(sql`update write_receipts set created_at = now() - interval '25 hours'
      where project_id = ${owner.projectId} and result->'deleted_attempt_ids' = ${JSON.stringify([oldCall.body.data.deleted_attempt_id])}::jsonb`);
    await purgeExpired(db);
    expect(await receipts(oldCall.body.data.deleted_attempt_id)).toBe(0);
    expect(await receipts(freshCall.body.data.deleted_attempt_id)).toBe(1);
  });
});
