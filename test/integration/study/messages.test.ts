/**
 * The study planner's conversation memory in workerd: a conversation saved and read back in
 * order, page by page, new sessions and tenant isolation. (Saves retried after a lost answer:
 * retry-safety.test.ts.)
 */
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, data, failure, newTenant, rowCount, type Data, type Tenant } from './helpers.ts';

const CONVERSATION = [
  ['system', 'You are a patient study coach.'],
  ['user', 'Help me revise photosynthesis.'],
  ['assistant', 'Sure. What are its two stages?'],
  ['user', 'Light reactions and the Calvin cycle.'],
  ['assistant', 'Right.'],
] as const;

describe('a conversation', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await newTenant('Messages');
    for (const [role, content] of CONVERSATION) await data(tenant, 'save-message', { session_id: 'biology/2026-11-02', role, content });
    await data(tenant, 'save-message', { session_id: 'another session', role: 'user', content: 'Elsewhere.' });
  });

  it('is read back in the order it was saved', async () => {
    const read = await data(tenant, 'get-messages', { session_id: 'biology/2026-11-02' });
    expect(read.messages.map((m: Data) => [m.message_id, m.role, m.content])).toEqual(
      CONVERSATION.map(([role, content], i) => [i + 1, role, content]),
    );
    expect(read.messages[0].created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(read.next_cursor).toBeNull();
  });

  it('is read a page at a time, oldest or newest first', async () => {
    const pages = async (order: string) => {
      const seen: number[] = [];
      let cursor: string | null | undefined;
      do {
        const page = await data(tenant, 'get-messages', { session_id: 'biology/2026-11-02', order, limit: 2, cursor });
        seen.push(...page.messages.map((m: Data) => m.message_id));
        cursor = page.next_cursor;
      } while (cursor);
      return seen;
    };
    expect(await pages('oldest_first')).toEqual([1, 2, 3, 4, 5]);
    expect(await pages('newest_first')).toEqual([5, 4, 3, 2, 1]);
  });

  it('answers a session never used with success and no messages: a new conversation has no history yet', async () => {
    const { status, body } = await call(tenant, 'get-messages', { session_id: 'never used' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, data: { session_id: 'never used', messages: [], next_cursor: null } });
    expect(body.message).toContain('has no messages yet');
  });

  it('takes an integer session_id as the same session as its text, whichever form writes and reads', async () => {
    const saved = await data(tenant, 'save-message', { session_id: 7, role: 'user', content: 'Written with 7.' });
    expect(saved.session_id).toBe('7');
    await data(tenant, 'save-message', { session_id: '7', role: 'assistant', content: 'Written with "7".' });
    for (const session_id of [7, '7']) {
      const read = await data(tenant, 'get-messages', { session_id });
      expect(read.session_id).toBe('7');
      expect(read.messages.map((m: Data) => m.content)).toEqual(['Written with 7.', 'Written with "7".']);
    }
    expect(await rowCount('chat_sessions', tenant.projectId, sql`session_id = '7'`)).toBe(1);
    expect(await rowCount('chat_messages', tenant.projectId, sql`session_id = '7'`)).toBe(2);
    const error = await failure(tenant, 'save-message', { session_id: 7.5, role: 'user', content: 'Hi' }, 400, 'VALIDATION_ERROR');
    expect(error.details.fields).toMatchObject([{ field: 'session_id', received: '7.5' }]);
  });

  it.each([
    ['an unknown role', { session_id: 's', role: 'bot', content: 'Hi' }, 'role', 'invalid_value'],
    ['empty content', { session_id: 's', role: 'user', content: '' }, 'content', 'too_small'],
    ['content over 20,000 characters', { session_id: 's', role: 'user', content: 'x'.repeat(20_001) }, 'content', 'too_big'],
    ['no session', { role: 'user', content: 'Hi' }, 'session_id', 'required'],
  ])('refuses %s, naming the field', async (_case, input, field, code) => {
    const error = await failure(tenant, 'save-message', input, 400, 'VALIDATION_ERROR');
    expect(error.details.fields).toMatchObject([{ field, code }]);
  });
});

describe('tenant isolation', () => {
  it("never shows another project's conversation, and keeps sessions of the same name apart", async () => {
    const owner = await newTenant('Messages: owner');
    const other = await newTenant('Messages: other');
    await data(owner, 'save-message', { session_id: 'shared name', role: 'user', content: 'Owner secret.' });
    await data(owner, 'save-message', { session_id: 'owner only', role: 'user', content: 'Owner only.' });
    expect((await data(other, 'get-messages', { session_id: 'owner only' })).messages).toEqual([]);
    expect((await data(other, 'get-messages', { session_id: 'shared name' })).messages).toEqual([]);
    await data(other, 'save-message', { session_id: 'shared name', role: 'user', content: 'Other text.' });
    expect((await data(other, 'get-messages', { session_id: 'shared name' })).messages.map((m: Data) => m.content)).toEqual([
      'Other text.',
    ]);
    expect((await data(owner, 'get-messages', { session_id: 'shared name' })).messages.map((m: Data) => m.content)).toEqual([
      'Owner secret.',
    ]);
    expect(await rowCount('chat_messages', owner.projectId)).toBe(2);
  });
});
