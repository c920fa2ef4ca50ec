/**
 * An Idempotency-Key's life and reach over HTTP, through the real pipeline in workerd: forgotten
 * after it expires, expired records and old write receipts purged, scoped per project and per tool,
 * its syntax (1 to 255 printable ASCII characters, one key), and ignored on read-only tools.
 */
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db, moodRows, tenantB, tenantC, uniqueTimestamp } from './helpers.ts';
import { call, count, mood, newKey, quoted, records } from './idempotency-fixture.ts';

describe('Idempotency-Key over HTTP', () => {
  it('forgets a key after it expires: the key then runs again (recognising its rows) or takes a new input', async () => {
    const userId = `idem_${crypto.randomUUID().slice(0, 8)}`;
    const input = mood(userId);
    const key = newKey();
    const expire = () => db.execute(sql`update idempotency_keys set expires_at = now() - interval '1 second' where key = ${key}`);
    const first = await call('log-mood', input, { idempotencyKey: key });
    await expire();

    const sameInput = await call('log-mood', input, { idempotencyKey: key });
    expect(sameInput.status).toBe(200);
    expect(sameInput.body.meta.replayed).toBeUndefined();
    expect(sameInput.body.meta.attempts).toBe(1);
    expect(sameInput.body.data.id).toBe(first.body.data.id);
    expect(await moodRows(tenantC.projectId, userId)).toBe(1);

    await expire();
    const newInput = await call('log-mood', mood(userId, { mood: 'sad' }), { idempotencyKey: key });
    expect(newInput.status).toBe(200);
    expect(newInput.body.meta.replayed).toBeUndefined();
    expect(await moodRows(tenantC.projectId, userId)).toBe(2);
  });

  it('purges expired records and old write receipts after a keyed call', async () => {
    const stale = newKey();
    await call('log-mood', mood(`idem_${crypto.randomUUID().slice(0, 8)}`), { idempotencyKey: stale });
    await db.execute(sql`update idempotency_keys set expires_at = now() - interval '1 second' where key = ${stale}`);
    const receiptId = crypto.randomUUID();
    await db.execute(sql`insert into write_receipts (id, project_id, result, created_at)
      values (${receiptId}, ${tenantC.projectId}, '{}'::jsonb, now() - interval '25 hours')`);
    const fresh = newKey();
    await call('log-mood', mood(`idem_${crypto.randomUUID().slice(0, 8)}`), { idempotencyKey: fresh });

    expect(await records(stale)).toBe(0);
    expect(await records(fresh)).toBe(1);
    expect(await count(sql`select count(*)::int as n from write_receipts where id = ${receiptId}`)).toBe(0);
  });

  it('scopes keys per project and per tool: the same key elsewhere is another call', async () => {
    const userId = `idem_${crypto.randomUUID().slice(0, 8)}`;
    const input = mood(userId);
    const key = newKey();
    const a = await call('log-mood', input, { idempotencyKey: key });
    const b = await call('log-mood', input, { idempotencyKey: key, key: tenantB.apiKey });
    expect(b.status).toBe(200);
    expect(b.body.meta.replayed).toBeUndefined();
    expect(b.body.data.id).not.toBe(a.body.data.id);
    expect(await moodRows(tenantC.projectId, userId)).toBe(1);
    expect(await moodRows(tenantB.projectId, userId)).toBe(1);

    const otherTool = await call(
      'log-telegram-checkin',
      { user_id: userId, status: 'ok', checked_in_at: uniqueTimestamp() },
      { idempotencyKey: key },
    );
    expect(otherTool.status).toBe(200);
    expect(otherTool.body.meta.replayed).toBeUndefined();
  });

  it.each([
    ['longer than 255 characters', quoted('k'.repeat(256))],
    ['empty', '""'],
    ['an unclosed string', '"abc'],
    ['sent twice', '"one", "two"'],
    ['not ASCII', '"clé"'],
    ['a bare value with a space', 'two words'],
  ])('refuses a key that is %s with VALIDATION_ERROR, writing nothing', async (_case, header) => {
    const userId = `idem_${crypto.randomUUID().slice(0, 8)}`;
    const answer = await call('log-mood', mood(userId), { idempotencyKey: header });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field: 'Idempotency-Key', code: 'invalid_idempotency_key' }] },
    });
    expect(await moodRows(tenantC.projectId, userId)).toBe(0);
  });

  it('accepts a key of exactly 255 characters', async () => {
    const answer = await call('log-mood', mood(`idem_${crypto.randomUUID().slice(0, 8)}`), {
      idempotencyKey: crypto.randomUUID() + 'k'.repeat(219),
    });
    expect(answer.status).toBe(200);
  });

  it('ignores the key on read-only tools', async () => {
    const key = newKey();
    const answer = await call('semantic-search', { query: 'hire engineers' }, { idempotencyKey: key });
    expect(answer.status).toBe(200);
    expect(await records(key)).toBe(0);
  });
});
