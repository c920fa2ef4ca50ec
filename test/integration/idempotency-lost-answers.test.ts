/**
 * Idempotency-Key when the database's answers are lost, through the real pipeline in workerd and
 * the fault proxy (each statement runs and commits, its answer never comes back): a claim whose
 * answer was lost is recognised by its own call, a claim whose answers were all lost does not hold
 * the key, and a write left unconfirmed is not stored, its repeat recognising the rows it wrote.
 * The fault rules are per database: the tests that set them stay in this file, one after another.
 */
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import { createGateway } from '../../shared/http/app.ts';
import { db, moodRows, tenantC } from './helpers.ts';
import { call, count, mood, newKey, records, services } from './idempotency-fixture.ts';

const DATABASE = 'idempotency';
const faultyUrl = services.faultyDatabaseUrl.replace(/\/[^/]*$/, `/${DATABASE}`);

/** The next `count` statements containing `match` run (and commit) on the database; their answers are lost. */
async function loseAnswers(count: number, match: string): Promise<void> {
  const response = await fetch(services.faultControlUrl, {
    method: 'POST',
    body: JSON.stringify({ count, fault: 'connection_reset', when: 'after', match, database: DATABASE }),
  });
  expect(response.status).toBe(200);
}

describe('Idempotency-Key over HTTP', () => {
  it('a claim whose answer was lost is recognised by the call that sent it: it runs once, and the key replays', async () => {
    const userId = `idem_${crypto.randomUUID().slice(0, 8)}`;
    const input = mood(userId);
    const key = newKey();
    // The database commits the claim; its answer never comes back.
    await loseAnswers(1, 'insert into idempotency_keys');
    const first = await call('log-mood', input, { idempotencyKey: key, env: { DATABASE_URL: faultyUrl } });
    expect(first.status).toBe(200);
    expect(await moodRows(tenantC.projectId, userId)).toBe(1);
    const again = await call('log-mood', input, { idempotencyKey: key, env: { DATABASE_URL: faultyUrl } });
    expect(again.status).toBe(200);
    expect(again.body.meta).toMatchObject({ replayed: true, trace_id: first.body.meta.trace_id });
    expect(await moodRows(tenantC.projectId, userId)).toBe(1);
    expect(await records(key)).toBe(1);
  });

  it('a claim whose answers were all lost does not hold the key: the call says it did not run, the repeat runs at once', async () => {
    const userId = `idem_${crypto.randomUUID().slice(0, 8)}`;
    const input = mood(userId);
    const key = newKey();
    // Every send of the claim commits, and every answer is lost.
    await loseAnswers(3, 'insert into idempotency_keys');
    const lost = await call('log-mood', input, { idempotencyKey: key, env: { DATABASE_URL: faultyUrl } });
    expect(lost.status).toBe(503);
    expect(lost.body.error).toMatchObject({ code: 'DATABASE_ERROR', retryable: true });
    expect(lost.body.meta.attempts).toBe(0);
    expect(await moodRows(tenantC.projectId, userId)).toBe(0);
    // Dropped by its trace id once the call was answered: no 409 for the claim's lease.
    expect(await records(key)).toBe(0);

    const repeated = await call('log-mood', input, { idempotencyKey: key, env: { DATABASE_URL: faultyUrl } });
    expect(repeated.status).toBe(200);
    expect(repeated.body.meta.replayed).toBeUndefined();
    expect(await moodRows(tenantC.projectId, userId)).toBe(1);
  });

  it('does not store a write the database left unconfirmed; the repeated call recognises the rows the first one wrote', async () => {
    const title = `Keyed ${crypto.randomUUID()}`;
    const input = { title, content: '- [ ] One\n- [ ] Two' };
    const key = newKey();
    // Every attempt of the first call commits its document, then loses the answer, past a short settling.
    await loseAnswers(1_000, 'insert into documents');
    const settlingBriefly = createGateway(tools, { retryDelayMs: 10, settleWritesMs: 100 });
    const failed = await call('add-document', input, { idempotencyKey: key, env: { DATABASE_URL: faultyUrl }, gateway: settlingBriefly });
    await loseAnswers(0, 'insert into documents');
    expect(failed.status).toBe(503);
    expect(failed.body.error).toMatchObject({
      code: 'DATABASE_ERROR',
      retryable: true,
      details: { reason: 'write_unconfirmed', idempotency_key: key },
    });
    expect(failed.body.meta.attempts).toBeGreaterThan(3);
    expect(await records(key)).toBe(0);

    const repeated = await call('add-document', input, { idempotencyKey: key, env: { DATABASE_URL: faultyUrl } });
    expect(repeated.status).toBe(200);
    expect(repeated.body.meta.replayed).toBeUndefined();
    const { rows } = await db.execute(sql`select id from documents where title = ${title}`);
    expect(rows).toEqual([{ id: repeated.body.data.document_id }]);
    expect(await count(sql`select count(*)::int as n from tasks where document_id = ${repeated.body.data.document_id}`)).toBe(2);
  });
});
