/**
 * Idempotency-Key over HTTP, through the real pipeline in workerd: the stored answer replayed for
 * the same key and input (read as an RFC 8941 string or bare, kept exactly, failures after
 * execution began included), another input refused, a call still running answered 409, a claim
 * abandoned past its lease taken over, and what is not stored: a validation failure, a call refused
 * BUSY before it ran. Rows are counted: a replay writes nothing. (MCP's `_meta` key is tested in
 * mcp-idempotency.test.ts.)
 */
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { ok } from '../../shared/core/contract.ts';
import { defineTool, type AnyTool } from '../../shared/core/tool.ts';
import { createGateway } from '../../shared/http/app.ts';
import { db, gatedTool, moodRows, tenantC } from './helpers.ts';
import { call, count, mood, newKey, quoted, records, services } from './idempotency-fixture.ts';

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
