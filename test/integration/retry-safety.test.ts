/**
 * Every write tool, retried after the database committed and the answer was lost on the way back
 * (the fault proxy forwards the write, then drops the connection or answers 503): the pipeline
 * retries, and the rows are counted. Exactly one document, one row, one relationship set; no false
 * CONFLICT or NOT_FOUND; the other tenant's rows untouched.
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { storeDocument } from '../../functions/documents/lib/ingest.ts';
import { tools } from '../../functions/registry.ts';
import { createGateway } from '../../shared/http/app.ts';
import { callTool, db, tenantC, tenantB, uniqueTimestamp } from './helpers.ts';

type Data = Record<string, any>;

const services = env.TEST_SERVICES;
/** This file's own fault scripts: the proxy keeps them per database name. */
const DATABASE = 'retry_safety';
const faultyUrl = services.faultyDatabaseUrl.replace(/\/[^/]*$/, `/${DATABASE}`);
const gateway = createGateway(tools, { retryDelayMs: 10 });

/** A fault script of local/fault-proxy.ts (which runs in Node, outside this worker's types). */
interface FaultScript {
  count: number;
  fault: 'connection_reset' | 'unavailable';
  when: 'after';
  match: string;
}

async function fault(script: FaultScript): Promise<void> {
  const response = await fetch(services.faultControlUrl, { method: 'POST', body: JSON.stringify({ ...script, database: DATABASE }) });
  expect(response.status).toBe(200);
}

/** Loses the answer of the next query matching `match`, after the database ran it. */
const loseAnswerOf = (match: string, how: FaultScript['fault'] = 'connection_reset') =>
  fault({ count: 1, fault: how, when: 'after', match });

/** Calls a tool through the gateway, its database behind the fault proxy. */
async function call(toolId: string, input: unknown, key = tenantC.apiKey): Promise<{ status: number; body: Data }> {
  const ctx = createExecutionContext();
  const response = await gateway.fetch(
    new Request(`http://edge-tools.test/tools/${toolId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(input),
    }),
    { ...env, DATABASE_URL: faultyUrl },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: response.status, body: (await response.json()) as Data };
}

async function count(query: ReturnType<typeof sql>): Promise<number> {
  const { rows } = await db.execute(query);
  return (rows[0] as { n: number }).n;
}

/** Tenant B's rows, read back in full: they must be identical after tenant A's retried writes. */
let tenantBDocumentId: string;
const tenantBTimestamp = uniqueTimestamp();
async function tenantBRows(): Promise<unknown[]> {
  const queries = [
    sql`select id, title, content from documents where id = ${tenantBDocumentId}`,
    sql`select id, text, position, embedding_status from tasks where document_id = ${tenantBDocumentId} order by position`,
    sql`select id, user_id, mood from mood_entries where project_id = ${tenantB.projectId} and user_id = 'retry_user'`,
  ];
  return Promise.all(queries.map(async (query) => (await db.execute(query)).rows));
}
let tenantBBefore: unknown[];

beforeAll(async () => {
  const document = await callTool<Data>(
    'add-document',
    { title: 'Tenant B plan', content: '- [ ] Keep tenant B apart' },
    { key: tenantB.apiKey },
  );
  tenantBDocumentId = document.body.success ? document.body.data.document_id : '';
  // The same unique values as tenant A's retried mood entry: a per-tenant constraint must not conflict.
  await callTool('log-mood', { user_id: 'retry_user', mood: 'sad', energy_level: 2, timestamp: tenantBTimestamp }, { key: tenantB.apiKey });
  tenantBBefore = await tenantBRows();
  expect(tenantBBefore.every((rows) => (rows as unknown[]).length > 0)).toBe(true);
  // Warm the key and column caches through the proxy, so each fault hits the write it targets.
  await call('log-mood', { user_id: 'warm', mood: 'happy', energy_level: 5, timestamp: uniqueTimestamp() });
});

const ensureTenantBUnchanged = async () => expect(await tenantBRows()).toEqual(tenantBBefore);

describe('a write retried after its answer was lost writes once', () => {
  it('add-document: one document, its tasks once, the answer of the first attempt', async () => {
    const title = `Lost answer ${crypto.randomUUID()}`;
    await loseAnswerOf('insert into documents');
    const { status, body } = await call('add-document', {
      title,
      content: '- [ ] Draft the plan\n- [ ] Review the plan after draft the plan',
    });

    expect(status).toBe(200);
    expect(body.meta.attempts).toBe(2);
    expect(await count(sql`select count(*)::int as n from documents where title = ${title}`)).toBe(1);
    expect(
      await count(sql`select count(*)::int as n from documents where id = ${body.data.document_id} and project_id = ${tenantC.projectId}`),
    ).toBe(1);
    const { rows } = await db.execute(
      sql`select id, embedding_status from tasks where document_id = ${body.data.document_id} order by position`,
    );
    expect(rows.map((row) => (row as Data).id)).toEqual(body.data.tasks.map((task: Data) => task.task_id));
    expect(rows.every((row) => (row as Data).embedding_status === 'completed')).toBe(true);
    await ensureTenantBUnchanged();
  });

  it('add-document: the embeddings written, the answer lost (HTTP 503): still one document', async () => {
    const title = `Lost embedding answer ${crypto.randomUUID()}`;
    await loseAnswerOf('update tasks as t set embedding', 'unavailable');
    const { status, body } = await call('add-document', { title, content: '- [ ] One\n- [ ] Two\n- [ ] Three' });

    expect(status).toBe(200);
    expect(body.meta.attempts).toBe(2);
    expect(body.data).toMatchObject({ task_count: 3, embedded_count: 3, failed_count: 0 });
    expect(await count(sql`select count(*)::int as n from documents where title = ${title}`)).toBe(1);
    expect(
      await count(
        sql`select count(*)::int as n from tasks where document_id = ${body.data.document_id} and embedding_status = 'completed'`,
      ),
    ).toBe(3);
  });

  it('replace-document: the new tasks once, the old ones gone, no NOT_FOUND', async () => {
    const added = await call('add-document', { title: 'Before', content: '- [ ] Old one\n- [ ] Old two' });
    const documentId = added.body.data.document_id;
    await loseAnswerOf('update documents set title');
    const { status, body } = await call('replace-document', {
      document_id: documentId,
      title: 'After',
      content: '- [ ] New one\n- [ ] New two\n- [ ] New three',
    });

    expect(status).toBe(200);
    expect(body.meta.attempts).toBe(2);
    const { rows } = await db.execute(sql`select id, text from tasks where document_id = ${documentId} order by position`);
    expect(rows.map((row) => (row as Data).text)).toEqual(['New one', 'New two', 'New three']);
    expect(rows.map((row) => (row as Data).id)).toEqual(body.data.tasks.map((task: Data) => task.task_id));
    expect(await count(sql`select count(*)::int as n from documents where id = ${documentId} and title = 'After'`)).toBe(1);
    await ensureTenantBUnchanged();
  });

  it('delete-document: answers what the committed attempt deleted, not NOT_FOUND', async () => {
    const added = await call('add-document', { title: 'Doomed', content: '- [ ] A\n- [ ] B' });
    const documentId = added.body.data.document_id;
    await loseAnswerOf('delete from documents');
    const { status, body } = await call('delete-document', { document_id: documentId });

    expect(status).toBe(200);
    expect(body.meta.attempts).toBe(2);
    expect(body.data).toEqual({ document_id: documentId, deleted_task_count: 2 });
    expect(await count(sql`select count(*)::int as n from documents where id = ${documentId}`)).toBe(0);
    expect(await count(sql`select count(*)::int as n from tasks where document_id = ${documentId}`)).toBe(0);
    // A new call for the same document is a different call: the document is gone.
    expect((await call('delete-document', { document_id: documentId })).status).toBe(404);
    await ensureTenantBUnchanged();
  });

  it('embed-tasks: every task embedded once, the call succeeds', async () => {
    const { documentId } = await storeDocument(db, tenantC.projectId, { title: 'Pending', content: '- [ ] Embed me\n- [ ] Embed me too' });
    await loseAnswerOf('update tasks as t set embedding');
    const { status, body } = await call('embed-tasks', { document_id: documentId });

    expect(status).toBe(200);
    expect(body.meta.attempts).toBe(2);
    expect(body.data.remaining_count).toBe(0);
    expect(
      await count(sql`select count(*)::int as n from tasks where document_id = ${documentId} and embedding_status = 'completed'`),
    ).toBe(2);
    expect(await count(sql`select count(*)::int as n from tasks where document_id = ${documentId}`)).toBe(2);
  });

  it('detect-dependencies: the relationship set once', async () => {
    const added = await call('add-document', { title: 'Chain', content: '- [ ] Draft the memo\n- [ ] Send the memo after draft the memo' });
    const taskIds = added.body.data.tasks.map((task: Data) => task.task_id);
    await loseAnswerOf('insert into task_relationships');
    const { status, body } = await call('detect-dependencies', { task_ids: taskIds });

    expect(status).toBe(200);
    expect(body.meta.attempts).toBe(2);
    expect(body.data.relationships.length).toBeGreaterThan(0);
    expect(
      await count(sql`select count(*)::int as n from task_relationships where source_task_id = any(${sql.param(taskIds)}::uuid[])`),
    ).toBe(body.data.relationships.length);
  });

  it('log-mood: one row, the same id, no CONFLICT from its own unique constraint', async () => {
    await loseAnswerOf('insert into "mood_entries"');
    const { status, body } = await call('log-mood', { user_id: 'retry_user', mood: 'happy', energy_level: 7, timestamp: tenantBTimestamp });

    expect(status).toBe(200);
    expect(body.meta.attempts).toBe(2);
    const { rows } = await db.execute(
      sql`select id from mood_entries where project_id = ${tenantC.projectId} and user_id = 'retry_user' and timestamp = ${tenantBTimestamp}`,
    );
    expect(rows).toEqual([{ id: body.data.id }]);
    await ensureTenantBUnchanged();
  });

  it('submit-health-form and log-telegram-checkin: one row each', async () => {
    const patient = `Patient ${crypto.randomUUID()}`;
    await loseAnswerOf('insert into "health_forms"', 'unavailable');
    const form = await call('submit-health-form', {
      patient_name: patient,
      age: 40,
      weight_kg: 70.555,
      smoker: false,
      blood_type: 'A+',
      recorded_at: uniqueTimestamp(),
    });
    expect(form.status).toBe(200);
    expect(form.body.meta.attempts).toBe(2);
    expect((await db.execute(sql`select id, weight_kg::text from health_forms where patient_name = ${patient}`)).rows).toEqual([
      { id: form.body.data.id, weight_kg: '70.56' },
    ]);
    // The retry found the row the first attempt wrote, and says how its number was stored.
    expect(form.body.meta.warnings).toMatchObject([{ code: 'rounded', field: 'weight_kg', received: 70.555, stored: 70.56 }]);

    const user = `tg_${crypto.randomUUID().slice(0, 8)}`;
    await loseAnswerOf('insert into "telegram_checkins"');
    const checkin = await call('log-telegram-checkin', { user_id: user, status: 'ok', checked_in_at: uniqueTimestamp() });
    expect(checkin.status).toBe(200);
    expect(checkin.body.meta.attempts).toBe(2);
    expect((await db.execute(sql`select id from telegram_checkins where telegram_user_id = ${user}`)).rows).toEqual([
      { id: checkin.body.data.id },
    ]);
  });

  it('still answers CONFLICT when another call wrote the same unique values', async () => {
    const timestamp = uniqueTimestamp();
    const input = { user_id: 'conflict_user', mood: 'happy', energy_level: 7, timestamp };
    expect((await call('log-mood', input)).status).toBe(200);
    const second = await call('log-mood', input);
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('CONFLICT');
  });
});
