/**
 * Idempotency-Key over HTTP, through the real pipeline in workerd: replay, mismatch, a call still
 * running, an abandoned claim taken over, what is and is not stored, expiry and purge, scope per
 * project and per tool, and key syntax. Rows are counted: a replay writes nothing. (MCP's `_meta`
 * key is tested in mcp-idempotency.test.ts.)
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { tools } from '../../functions/registry.ts';
import { ok } from '../../shared/core/contract.ts';
import { defineTool, IDEMPOTENCY_NOTE, type AnyTool } from '../../shared/core/tool.ts';
import type { Env } from '../../shared/runtime/env.ts';
import { createGateway } from '../../shared/http/app.ts';
import { db, gatedTool, getJson, tenantB, tenantC, uniqueTimestamp, moodRows } from './helpers.ts';

type Data = Record<string, any>;
interface Answer {
  status: number;
  headers: Headers;
  body: Data;
}

const services = env.TEST_SERVICES;
const DATABASE = 'idempotency';
const faultyUrl = services.faultyDatabaseUrl.replace(/\/[^/]*$/, `/${DATABASE}`);
const registryGateway = createGateway(tools, { retryDelayMs: 10 });

const newKey = () => `key-${crypto.randomUUID()}`;

/** The next `count` statements containing `match` run (and commit) on the database; their answers are lost. */
async function loseAnswers(count: number, match: string): Promise<void> {
  const response = await fetch(services.faultControlUrl, {
    method: 'POST',
    body: JSON.stringify({ count, fault: 'connection_reset', when: 'after', match, database: DATABASE }),
  });
  expect(response.status).toBe(200);
}
const quoted = (key: string) => `"${key}"`;

interface CallOptions {
  key?: string | null;
  /** The raw Idempotency-Key header. */
  idempotencyKey?: string;
  gateway?: { fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> };
  env?: Partial<Env>;
}

async function call(
  toolId: string,
  input: unknown,
  { key = tenantC.apiKey, idempotencyKey, gateway = registryGateway, env: vars = {} }: CallOptions = {},
): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  const ctx = createExecutionContext();
  const response = await gateway.fetch(
    new Request(`http://edge-tools.test/tools/${toolId}`, { method: 'POST', headers, body: JSON.stringify(input) }),
    { ...env, ...vars } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: response.status, headers: response.headers, body: (await response.json()) as Data };
}

async function count(query: ReturnType<typeof sql>): Promise<number> {
  return ((await db.execute(query)).rows[0] as { n: number }).n;
}

const records = (key: string) => count(sql`select count(*)::int as n from idempotency_keys where key = ${key}`);
const mood = (userId: string, overrides: Data = {}) => ({
  user_id: userId,
  mood: 'happy',
  energy_level: 6,
  timestamp: uniqueTimestamp(),
  ...overrides,
});

describe('Idempotency-Key over HTTP', () => {
  it('replays the stored answer for the same key and input: nothing runs, nothing is written', async () => {
    const userId = `idem_${crypto.randomUUID().slice(0, 8)}`;
    const input = mood(userId);
    const key = newKey();
    const first = await call('log-mood', input, { idempotencyKey: quoted(key) });
    expect(first.status).toBe(200);
    expect(first.body.meta.replayed).toBeUndefined();

    const again = await call('log-mood', input, { idempotencyKey: quoted(key) });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(first.body.data);
    expect(again.body.message).toBe(first.body.message);
    expect(again.body.meta).toMatchObject({ replayed: true, trace_id: first.body.meta.trace_id, attempts: 0 });
    expect(await moodRows(tenantC.projectId, userId)).toBe(1);
    // Only the first call is an execution in the trace.
    expect(await count(sql`select count(*)::int as n from tool_executions where tool = 'log-mood' and input->>'user_id' = ${userId}`)).toBe(
      1,
    );
  });

  it('reads the key as an RFC 8941 string or bare, the same key either way', async () => {
    const userId = `idem_${crypto.randomUUID().slice(0, 8)}`;
    const input = mood(userId);
    const key = newKey();
    expect((await call('log-mood', input, { idempotencyKey: key })).status).toBe(200);
    const again = await call('log-mood', input, { idempotencyKey: ` ${quoted(key)} ` });
    expect(again.body.meta.replayed).toBe(true);
    expect(await moodRows(tenantC.projectId, userId)).toBe(1);
  });

  it('refuses the same key with another input: 422 IDEMPOTENCY_MISMATCH, nothing written', async () => {
    const userId = `idem_${crypto.randomUUID().slice(0, 8)}`;
    const key = newKey();
    expect((await call('log-mood', mood(userId), { idempotencyKey: key })).status).toBe(200);
    const other = await call('log-mood', mood(userId, { energy_level: 2 }), { idempotencyKey: key });
    expect(other.status).toBe(422);
    expect(other.body.error).toMatchObject({
      code: 'IDEMPOTENCY_MISMATCH',
      retryable: false,
      details: { reason: 'idempotency_key_reused' },
    });
    expect(other.body.error.message).toContain('different input');
    expect(other.body.meta.attempts).toBe(0);
    expect(await moodRows(tenantC.projectId, userId)).toBe(1);
  });

  it('answers 409 CONFLICT, retryable with Retry-After, while the first call still runs; then replays its answer', async () => {
    const { gateway, state, started, open } = gatedTool();
    const key = newKey();
    const first = call('gated-write', { value: 1 }, { gateway, idempotencyKey: key });
    await started(1);
    const concurrent = await call('gated-write', { value: 1 }, { gateway, idempotencyKey: key });
    expect(concurrent.status).toBe(409);
    expect(concurrent.body.error).toMatchObject({ code: 'CONFLICT', retryable: true, details: { reason: 'idempotency_key_in_use' } });
    expect(Number(concurrent.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(concurrent.body.error.details.retry_after_ms).toBeGreaterThan(0);
    open();
    expect((await first).status).toBe(200);
    const after = await call('gated-write', { value: 1 }, { gateway, idempotencyKey: key });
    expect(after.body).toMatchObject({ success: true, data: { execution: 1 }, meta: { replayed: true } });
    expect(state.started).toBe(1);
  });

  it('takes over a claim abandoned past its lease, and the abandoned call cannot overwrite the new answer', async () => {
    const { gateway, state, started, open } = gatedTool();
    const key = newKey();
    const abandoned = call('gated-write', { value: 7 }, { gateway, idempotencyKey: key });
    await started(1);
    // As if its worker had died: the lease runs out with the claim still running.
    await db.execute(sql`update idempotency_keys set locked_until = now() - interval '1 second' where key = ${key}`);
    const takeover = call('gated-write', { value: 7 }, { gateway, idempotencyKey: key });
    await started(2);
    open();
    const [late, taken] = await Promise.all([abandoned, takeover]);
    expect(taken.body.data).toEqual({ execution: 2 });
    expect(late.status).toBe(200);
    const replay = await call('gated-write', { value: 7 }, { gateway, idempotencyKey: key });
    expect(replay.body).toMatchObject({ data: { execution: 2 }, meta: { replayed: true, trace_id: taken.body.meta.trace_id } });
    expect(state.started).toBe(2);
  });

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

  it('replays a failure that happened after execution began', async () => {
    const key = newKey();
    const input = { document_id: crypto.randomUUID(), title: 'Nowhere', content: '- [ ] Nothing' };
    const first = await call('replace-document', input, { idempotencyKey: key });
    expect(first.status).toBe(404);
    const again = await call('replace-document', input, { idempotencyKey: key });
    expect(again.status).toBe(404);
    expect(again.body).toMatchObject({
      success: false,
      error: first.body.error,
      meta: { replayed: true, trace_id: first.body.meta.trace_id },
    });
  });

  it('does not store a validation failure: the key stays free for the corrected call', async () => {
    const userId = `idem_${crypto.randomUUID().slice(0, 8)}`;
    const key = newKey();
    const invalid = await call('log-mood', mood(userId, { energy_level: 99 }), { idempotencyKey: key });
    expect(invalid.status).toBe(400);
    expect(await records(key)).toBe(0);
    const valid = await call('log-mood', mood(userId), { idempotencyKey: key });
    expect(valid.status).toBe(200);
    expect(valid.body.meta.replayed).toBeUndefined();
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

describe('Idempotency-Key: the stored answer is kept as it was', () => {
  it('replays text jsonb could not store (NUL, a lone surrogate) exactly', async () => {
    // Input never carries such text (the validation layer refuses it), but a tool's answer may.
    const awkward = 'a\u0000b \ud800 c';
    let executions = 0;
    const tool = defineTool({
      id: 'awkward-answer',
      toolset: 'documents',
      title: 'Awkward answer',
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      description: 'Answers a text Postgres jsonb refuses.',
      input: z.strictObject({ value: z.int() }),
      output: z.object({ text: z.string(), execution: z.int() }),
      example: { value: 1 },
      async execute() {
        return ok({ text: awkward, execution: ++executions }, 'Done.');
      },
    });
    const gateway = createGateway([tool as AnyTool], { retryDelayMs: 10 });
    const idempotencyKey = newKey();
    const first = await call('awkward-answer', { value: 1 }, { gateway, idempotencyKey });
    const replay = await call('awkward-answer', { value: 1 }, { gateway, idempotencyKey });
    // Compared as JSON text (ASCII escapes): a lone surrogate in a failure's diff would break the runner's report.
    expect(JSON.stringify(first.body.data)).toBe(JSON.stringify({ text: awkward, execution: 1 }));
    expect(replay.body.meta).toMatchObject({ replayed: true });
    expect(JSON.stringify(replay.body.data)).toBe(JSON.stringify({ text: awkward, execution: 1 }));
    expect(executions).toBe(1);
  });
});

describe('Idempotency-Key in the catalog and the OpenAPI document', () => {
  it('says which tools accept a key, in the catalog field and in their description', async () => {
    const { body } = await getJson<{ tools: Data[] }>('/tools');
    if (!body.success) throw new Error(body.message);
    for (const entry of body.data.tools) {
      expect(entry.accepts_idempotency_key).toBe(!entry.annotations.readOnlyHint);
      expect(entry.description.includes(IDEMPOTENCY_NOTE)).toBe(entry.accepts_idempotency_key);
    }
    const writers = body.data.tools.filter((entry) => entry.accepts_idempotency_key).map((entry) => entry.id);
    expect(writers).toEqual(
      expect.arrayContaining(['add-document', 'replace-document', 'delete-document', 'embed-tasks', 'detect-dependencies', 'log-mood']),
    );
    // Idempotent only with a key: the MCP hint of the tools that write new rows stays false.
    expect(body.data.tools.find((entry) => entry.id === 'add-document')!.annotations.idempotentHint).toBe(false);
  });

  it('documents the header on write tools and 422 among the failures', async () => {
    const response = await registryGateway.fetch(new Request('http://edge-tools.test/openapi.json'), env, createExecutionContext());
    const document = (await response.json()) as Data;
    const addDocument = document.paths['/tools/add-document'].post;
    expect(addDocument.parameters).toEqual([expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false })]);
    expect(addDocument.responses['422'].description).toContain('IDEMPOTENCY_MISMATCH');
    expect(document.paths['/tools/semantic-search'].post.parameters).toBeUndefined();
  });
});

const hasRedis = services.redisUrl !== '';
if (!hasRedis) console.warn('!!! redis-server is not installed: the Idempotency-Key admission test below is SKIPPED.');

describe.skipIf(!hasRedis)('Idempotency-Key and admission', () => {
  it('drops the claim of a call refused BUSY before it ran: the same key then runs', async () => {
    const { gateway, started, open } = gatedTool();
    const vars = { CONCURRENCY_NAMESPACE: `idem-${crypto.randomUUID()}`, CONCURRENCY_LIMIT: '1', QUEUE_TIMEOUT_MS: '200' };
    const holder = call('gated-write', { value: 1 }, { gateway, env: vars });
    await started(1);
    const key = newKey();
    const refused = await call('gated-write', { value: 2 }, { gateway, env: vars, idempotencyKey: key });
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('BUSY');
    open();
    await holder;
    expect(await records(key)).toBe(0);
    const admitted = call('gated-write', { value: 2 }, { gateway, env: vars, idempotencyKey: key });
    await started(2);
    open();
    expect((await admitted).status).toBe(200);
  });
});
