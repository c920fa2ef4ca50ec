/**
 * The study tools' cursors in workerd, as every tool's: a cursor continues exactly the call that
 * made it (the pages hold every row of the list once, counted in the database); sent with other
 * inputs it is refused, saying why; forged (a field of its position moved to or past a bound of
 * what the query holds) it is refused as input, VALIDATION_ERROR about the cursor, never a
 * database error.
 */
import { sql, type SQL } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { forgeries } from '../../support/forged-cursors.ts';
import { db } from '../helpers.ts';
import { call, data, newTenant, type Data, type Tenant } from './helpers.ts';

interface Case {
  tool: string;
  /** A first call whose list spans several pages. */
  input: Data;
  /** The same call with one other input changed. */
  other: Data;
  /** The key naming the rows the list pages through. */
  id: string;
  /** The ids the whole list holds, read from the database. */
  expected: (projectId: string) => SQL;
}

const CASES: Case[] = [
  {
    tool: 'list-plans',
    input: { limit: 2 },
    other: { limit: 2, status: 'active' },
    id: 'plan_id',
    expected: (p) => sql`select id from study_plans where project_id = ${p}`,
  },
  {
    tool: 'list-plan-items',
    input: { limit: 2 },
    other: { limit: 2, plan_id: 1 },
    id: 'item_id',
    expected: (p) => sql`select id from study_plan_items where project_id = ${p}`,
  },
  {
    tool: 'get-due-flashcards',
    input: { limit: 2 },
    other: { limit: 2, topic_id: 1 },
    id: 'card_id',
    expected: (p) => sql`select id from flashcards where project_id = ${p} and due <= now()`,
  },
  {
    tool: 'get-messages',
    input: { session_id: 'revision', limit: 2 },
    other: { session_id: 'revision', limit: 2, order: 'newest_first' },
    id: 'message_id',
    expected: (p) => sql`select id from chat_messages where project_id = ${p} and session_id = 'revision'`,
  },
  {
    tool: 'get-wrong-questions',
    input: { topic_id: 1, limit: 2 },
    other: { topic_id: 2, limit: 2 },
    id: 'attempt_id',
    expected: (p) => sql`select id from quiz_attempts where project_id = ${p} and topic_id = 1 and score < 0.7`,
  },
  {
    tool: 'get-weak-topics',
    input: { limit: 2 },
    other: { limit: 3 },
    id: 'topic_id',
    expected: (p) => sql`select distinct topic_id as id from quiz_attempts where project_id = ${p} and score is not null`,
  },
];

/** Every value under the key `key`, anywhere in `value`, in order. */
function idsUnder(value: unknown, key: string): number[] {
  if (Array.isArray(value)) return value.flatMap((item) => idsUnder(item, key));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([name, item]) => (name === key && typeof item === 'number' ? [item] : idsUnder(item, key)));
}

let tenant: Tenant;

beforeAll(async () => {
  tenant = await newTenant('Study cursors');
  for (const title of ['Biology', 'Chemistry', 'Physics'])
    await data(tenant, 'write-plan', { title, items: [`${title} notes`, `${title} exam`] });
  for (const [topic, score] of [
    ['Algebra', 0.1],
    ['Geometry', 0.4],
    ['Calculus', 0.9],
  ] as const) {
    const { topic_id } = await data(tenant, 'quiz-pre-fetch', { topic_name: topic });
    for (let i = 1; i <= 3; i++) await data(tenant, 'save-quiz-attempt', { topic_id, question: `${topic} ${i}?`, score });
    await data(tenant, 'create-flashcard', { front: `${topic} front`, back: `${topic} back`, topic_id });
  }
  for (const content of ['Hello.', 'What is a derivative?', 'A rate of change.', 'Thanks.'])
    await data(tenant, 'save-message', { session_id: 'revision', role: 'user', content });
});

describe.each(CASES.map((c) => [c.tool, c] as const))('%s', (_tool, c) => {
  it('pages through every row of its list once, with the same inputs and the cursor', async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Data = await data(tenant, c.tool, { ...c.input, ...(cursor ? { cursor } : {}) });
      seen.push(...idsUnder(page, c.id));
      cursor = page.next_cursor as string | null;
      pages++;
    } while (cursor && pages < 20);
    const { rows } = await db.execute(c.expected(tenant.projectId));
    const expected = (rows as { id: number }[]).map((row) => row.id);
    expect(expected.length).toBeGreaterThan(2);
    expect(pages).toBeGreaterThan(1);
    expect([...seen].sort((a, b) => a - b)).toEqual([...expected].sort((a, b) => a - b));
  });

  it('refuses its cursor sent with other inputs, saying why', async () => {
    const first = await data(tenant, c.tool, c.input);
    expect(first.next_cursor).toEqual(expect.any(String));
    const { status, body } = await call(tenant, c.tool, { ...c.other, cursor: first.next_cursor });
    expect(status).toBe(400);
    expect(body).toMatchObject({
      success: false,
      error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: 'cursor', code: 'invalid_cursor' }] } },
    });
    expect(body.message).toContain('continues a call with other inputs');
    expect(body.meta.attempts).toBe(1);
  });

  it('refuses a forged cursor as input, never failing in the database', async () => {
    const first = await data(tenant, c.tool, c.input);
    const forged = forgeries(first.next_cursor as string);
    expect(forged.filter((f) => f.outOfRange).length).toBeGreaterThan(0);
    for (const forgery of forged) {
      const context = `${forgery.field} = ${JSON.stringify(forgery.value)}`;
      const { status, body } = await call(tenant, c.tool, { ...c.input, cursor: forgery.cursor });
      if (body.success) {
        expect(forgery.outOfRange, context).toBe(false);
        continue;
      }
      expect(status, context).toBe(400);
      expect(body.error, context).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { fields: [{ field: 'cursor', code: 'invalid_cursor' }] },
      });
    }
  });
});

describe('get-messages', () => {
  it('answers a session without messages with success and 0 messages, saying it has none yet', async () => {
    const { status, body } = await call(tenant, 'get-messages', { session_id: 'a new conversation' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, data: { session_id: 'a new conversation', messages: [], next_cursor: null } });
    expect(body.message).toContain('has no messages yet');
    const { rows } = await db.execute(
      sql`select count(*)::int as n from chat_messages where project_id = ${tenant.projectId} and session_id = 'a new conversation'`,
    );
    expect(rows).toEqual([{ n: 0 }]);
  });
});
