/**
 * Concurrency and resilience through the real pipeline in workerd, against a real Redis (behind the
 * Upstash REST stand-in) and the Neon stand-in behind a fault-injecting proxy. The hundred-caller
 * case is in concurrency.stress.test.ts (the stress lane).
 */
import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { eq, sql } from 'drizzle-orm';
import { toolExecutions } from '../../drizzle/schema.ts';
import logMood from '../../functions/table-tools/log-mood.ts';
import { ok } from '../../shared/core/contract.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { createTenant, db, holdingTool, tenantA, uniqueTimestamp, moodRows } from './helpers.ts';
import { call, hasRedis, redis, redisEnv, semaphoreKeys, services } from './semaphore-calls.ts';

/**
 * A tool whose executions run until the test opens their gate (`{ gated: true }`) or return at once
 * (`{ gated: false }`): slots stay held exactly as long as the test wants, on any machine.
 */
function gatedTool() {
  const state = { running: 0, maxRunning: 0, started: [] as string[], gates: [] as (() => void)[] };
  const tool = defineTool({
    id: 'gate',
    toolset: 'documents',
    title: 'Test tool gate',
    annotations: READ_ONLY,
    description: 'Holds an execution slot until the test opens its gate.',
    input: z.strictObject({ gated: z.boolean() }),
    output: z.object({ gated: z.boolean() }),
    example: { gated: false },
    async execute({ gated }, { traceId }) {
      state.started.push(traceId);
      state.maxRunning = Math.max(state.maxRunning, ++state.running);
      if (gated) await new Promise<void>((resolve) => state.gates.push(resolve));
      state.running--;
      return ok({ gated }, 'Done.');
    },
  });
  /** Opens the oldest gate still closed. */
  const openOne = () => state.gates.shift()!();
  return { tool, state, openOne, openAll: () => state.gates.splice(0).forEach((open) => open()) };
}

const queuedEvents = (logs: string[]) => logs.map((line) => JSON.parse(line)).filter((entry) => entry.event === 'queued');

describe.skipIf(!hasRedis)('global semaphore through the pipeline', () => {
  let logs: string[];
  beforeEach(() => {
    logs = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => void logs.push(line));
    vi.spyOn(console, 'warn').mockImplementation((line: string) => void logs.push(line));
  });
  afterEach(() => vi.restoreAllMocks());

  it('Scenario 11: 15 simultaneous calls -> 10 run at once, 5 queue (logged with their depth), all succeed', async () => {
    const { tool, state, openAll } = gatedTool();
    const callEnv = redisEnv();
    const calls = Array.from({ length: 15 }, () => call(tool, { gated: true }, callEnv));
    // Nothing finishes before the gates open: 10 hold their slots, 5 wait.
    await vi.waitFor(
      () => {
        expect(state.running).toBe(10);
        expect(queuedEvents(logs)).toHaveLength(5);
      },
      { timeout: 20_000, interval: 10 },
    );
    openAll();
    await vi.waitFor(() => expect(state.started).toHaveLength(15), { timeout: 20_000, interval: 10 });
    openAll();
    const answers = await Promise.all(calls);

    expect(answers.map((a) => a.status)).toEqual(Array(15).fill(200));
    expect(state.maxRunning).toBe(10);
    const queued = queuedEvents(logs);
    expect(queued.map((e) => e.queue_depth).sort()).toEqual([0, 1, 2, 3, 4]);
    const queuedIds = queued.map((e) => e.trace_id);
    expect(state.started.slice(10).sort()).toEqual([...queuedIds].sort());
    for (const answer of answers.filter((a) => queuedIds.includes(a.body.meta.trace_id))) {
      expect(answer.body.meta.queued_ms).toBeGreaterThan(0);
    }
    expect(await semaphoreKeys(callEnv.CONCURRENCY_NAMESPACE!)).toEqual([]);
  }, 60_000);

  it('grants freed slots in queue order (FIFO by arrival at Redis)', async () => {
    const { tool, state, openOne, openAll } = gatedTool();
    const callEnv = redisEnv();
    // (No key re-check: it is not what this test is about.)
    const noRecheck = { auth: { recheckAfterMs: 60_000 } };
    const holders = Array.from({ length: 10 }, () => call(tool, { gated: true }, callEnv, noRecheck));
    await vi.waitFor(() => expect(state.running).toBe(10), { timeout: 20_000, interval: 10 });
    // Each waiter is sent once the one before it has queued: their arrival order is known.
    const waiters = [];
    for (let i = 0; i < 5; i++) {
      waiters.push(call(tool, { gated: true }, callEnv, noRecheck));
      await vi.waitFor(() => expect(queuedEvents(logs)).toHaveLength(i + 1), { timeout: 20_000, interval: 10 });
    }
    const queueOrder = queuedEvents(logs).map((e) => e.trace_id);
    expect(queuedEvents(logs).map((e) => e.queue_depth)).toEqual([0, 1, 2, 3, 4]);
    // Free one slot at a time, waiting for its waiter to start before freeing the next.
    for (let k = 0; k < 5; k++) {
      openOne();
      await vi.waitFor(() => expect(state.started).toHaveLength(11 + k), { timeout: 20_000, interval: 10 });
    }
    openAll();
    await Promise.all([...holders, ...waiters]);
    expect(state.started.slice(10)).toEqual(queueOrder);
  }, 60_000);

  it('answers BUSY with the queue position when no slot frees within the queue timeout', async () => {
    const { tool, state, openAll } = gatedTool();
    const callEnv = redisEnv({ CONCURRENCY_LIMIT: '1', QUEUE_TIMEOUT_MS: '300' });
    const holder = call(tool, { gated: true }, callEnv);
    await vi.waitFor(() => expect(state.running).toBe(1), { timeout: 20_000, interval: 10 });
    const waiter = await call(tool, { gated: false }, callEnv);
    openAll();
    expect((await holder).status).toBe(200);
    expect(waiter.status).toBe(503);
    expect(waiter.body.error).toMatchObject({ code: 'BUSY', retryable: true, details: { reason: 'timeout', queue_position: 0 } });
    expect(waiter.body.error.message).toMatch(/did not run/);
    expect(waiter.body.error.details.retry_after_ms).toBeGreaterThan(0);
    expect(waiter.body.meta.attempts).toBe(0);
    expect(state.started).toHaveLength(1);
  });

  it('refuses to run, with BUSY unavailable, when Redis cannot be reached', async () => {
    const { tool, state } = holdingTool();
    const { status, body } = await call(tool, { hold_ms: 0 }, redisEnv({ UPSTASH_REDIS_REST_URL: 'http://127.0.0.1:9' }));
    expect(status).toBe(503);
    expect(body.error).toMatchObject({ code: 'BUSY', retryable: true, details: { reason: 'unavailable' } });
    expect(state.started).toHaveLength(0);
  });

  it('a lease taken back while the tool ran: the tool finishes, its answer stands with a lease_lost warning, logged and traced', async () => {
    const seen: { aborted?: boolean } = {};
    const tool = defineTool({
      id: 'lose-lease',
      toolset: 'documents',
      title: 'Test tool lose-lease',
      annotations: READ_ONLY,
      description: 'Has its slot taken back, waits until its renewal learns it, then queries the database.',
      input: z.strictObject({}),
      output: z.object({ one: z.int() }),
      example: {},
      async execute(_, { db: toolDb, signal, traceId }) {
        const tag = `{${namespace}:semaphore}`;
        // The slot is taken back behind its back, as if its lease had expired and been reaped.
        await redis!.zrem(`${tag}:holders`, traceId);
        // Its next renewal (answered 0) is the only script left to run, and clears the last-heard key.
        await vi.waitFor(async () => expect(await redis!.exists(`${tag}:heard`)).toBe(0), { timeout: 20_000, interval: 20 });
        const { rows } = await toolDb.execute(sql`select 1 as one`);
        seen.aborted = signal.aborted;
        return ok({ one: Number((rows[0] as { one: number }).one) }, 'done');
      },
    });
    const callEnv = redisEnv();
    const namespace = callEnv.CONCURRENCY_NAMESPACE!;
    const { status, body } = await call(tool, {}, callEnv);
    expect(status).toBe(200);
    expect(body.data).toEqual({ one: 1 });
    expect(body.meta.warnings).toEqual([
      { code: 'lease_lost', message: expect.stringMatching(/taken back.*The answer is the tool's own/) },
    ]);
    expect(seen.aborted).toBe(false);
    const events = logs.map((line) => JSON.parse(line)).filter((entry) => entry.event === 'lease_lost');
    expect(events).toEqual([expect.objectContaining({ tool: 'lose-lease', trace_id: body.meta.trace_id, reason: 'taken_back', ok: true })]);
    const traced = await db
      .select({ status: toolExecutions.status, warnings: toolExecutions.warnings })
      .from(toolExecutions)
      .where(eq(toolExecutions.id, body.meta.trace_id));
    expect(traced).toEqual([{ status: 'success', warnings: body.meta.warnings }]);
  }, 30_000);

  it('refuses, with CONFIG_ERROR, a worker whose limit differs from the one its namespace is used with', async () => {
    const { tool, state, openAll } = gatedTool();
    const callEnv = redisEnv();
    const holder = call(tool, { gated: true }, callEnv);
    await vi.waitFor(() => expect(state.running).toBe(1), { timeout: 20_000, interval: 10 });
    const other = await call(tool, { gated: false }, { ...callEnv, CONCURRENCY_LIMIT: '20' });
    openAll();
    expect(other.status).toBe(500);
    expect(other.body.error).toMatchObject({
      code: 'CONFIG_ERROR',
      details: { reason: 'concurrency_limit_mismatch', configured_limit: 20, limit_in_use: 10, namespace: callEnv.CONCURRENCY_NAMESPACE },
    });
    expect((await holder).status).toBe(200);
    expect(state.started).toHaveLength(1);
    // Once nobody holds or waits, the new limit takes over.
    expect((await call(tool, { gated: false }, { ...callEnv, CONCURRENCY_LIMIT: '20' })).status).toBe(200);
  });

  it('rate-limits each key by its project limit, with retry_after_ms', async () => {
    const { apiKey: key } = await createTenant('Limited', { rateLimitPerMinute: 3 });
    const { tool, state } = holdingTool();
    const callEnv = redisEnv();
    const statuses = [];
    // The limiter's window is a minute of the clock, and calls that straddle two windows may pass (the
    // previous one weighs less and less): the clock is held mid-minute, so all four fall in one
    // window however long they take.
    vi.setSystemTime(Math.floor(Date.now() / 60_000) * 60_000 + 30_000);
    try {
      for (let i = 0; i < 4; i++) statuses.push(await call(tool, { hold_ms: 0 }, callEnv, {}, key));
    } finally {
      vi.useRealTimers();
    }
    expect(statuses.map((s) => s.status)).toEqual([200, 200, 200, 429]);
    expect(statuses[3]!.body.error).toMatchObject({ code: 'RATE_LIMITED', retryable: true, details: { limit_per_minute: 3 } });
    expect(statuses[3]!.body.error.details.retry_after_ms).toBeGreaterThan(0);
    expect(state.started).toHaveLength(3);
  });
});

/** A read of the database: how many moods the project logged. */
const countMoods = defineTool({
  id: 'count-moods',
  toolset: 'table-tools',
  title: 'Test tool count moods',
  annotations: READ_ONLY,
  description: 'Counts the moods logged in the project.',
  input: z.strictObject({}),
  output: z.object({ moods: z.number() }),
  example: {},
  async execute(_input, { db, project }) {
    const { rows } = await db.execute(sql`select count(*)::int as moods from mood_entries where project_id = ${project.id}`);
    return ok({ moods: (rows[0] as { moods: number }).moods }, 'Counted.');
  },
});

describe('retries and warnings', () => {
  const fault = (count: number, name: string) =>
    fetch(services.faultControlUrl, { method: 'POST', body: JSON.stringify({ count, fault: name }) });
  const faultyEnv = () => ({ ...env, DATABASE_URL: services.faultyDatabaseUrl });
  // The key is not re-checked here (it was verified by the warm-up), so each injected fault hits the insert.
  const fast = { retryDelayMs: 20, auth: { recheckAfterMs: 60_000 } };

  beforeEach(async () => {
    // Warm the key and column caches through the proxy, so the injected faults hit the insert.
    await fault(0, 'unavailable');
    await call(logMood, { user_id: 'user_warm', mood: 'happy', energy_level: 5, timestamp: uniqueTimestamp() }, faultyEnv(), fast);
  });

  it('retries a transient database failure and succeeds on the third attempt', async () => {
    await fault(2, 'serialization_failure');
    const { status, body } = await call(
      logMood,
      { user_id: 'user_retry', mood: 'happy', energy_level: 5, timestamp: uniqueTimestamp() },
      faultyEnv(),
      fast,
    );
    expect(status).toBe(200);
    expect(body.meta.attempts).toBe(3);
  });

  it('gives a read up after 3 attempts when the failure persists, retryable DATABASE_ERROR', async () => {
    await fault(3, 'unavailable');
    const { status, body } = await call(countMoods, {}, faultyEnv(), fast);
    expect(status).toBe(503);
    expect(body.error).toMatchObject({ code: 'DATABASE_ERROR', retryable: true });
    expect(body.meta.attempts).toBe(3);
  });

  it('keeps running a write past its retries until the database answers, and writes it once', async () => {
    const userId = `user_${crypto.randomUUID().slice(0, 8)}`;
    await fault(5, 'unavailable');
    const { status, body } = await call(
      logMood,
      { user_id: userId, mood: 'happy', energy_level: 5, timestamp: uniqueTimestamp() },
      faultyEnv(),
      fast,
    );
    expect(status).toBe(200);
    expect(body.meta.attempts).toBe(6);
    expect(await moodRows(tenantA.projectId, userId)).toBe(1);
  });

  it('answers a write the database never answered as unconfirmed, naming the key that repeats it safely', async () => {
    const userId = `user_${crypto.randomUUID().slice(0, 8)}`;
    const input = { user_id: userId, mood: 'happy', energy_level: 5, timestamp: uniqueTimestamp() };
    await fault(1_000, 'unavailable');
    const { status, body } = await call(logMood, input, faultyEnv(), { ...fast, settleWritesMs: 200 });
    await fault(0, 'unavailable');
    expect(status).toBe(500);
    expect(body.error).toMatchObject({
      code: 'DATABASE_ERROR',
      retryable: false,
      details: { reason: 'write_unconfirmed', idempotency_key: body.meta.trace_id },
    });
    expect(body.meta.attempts).toBeGreaterThan(3);
    expect(body.message).not.toMatch(/may or may not/);
    expect(await moodRows(tenantA.projectId, userId)).toBe(0);
    // Repeated with the key it names, the call writes once (here: nothing was written before).
    const repeated = await call(logMood, input, faultyEnv(), fast, tenantA.apiKey, body.error.details.idempotency_key);
    expect(repeated.status).toBe(200);
    expect(await moodRows(tenantA.projectId, userId)).toBe(1);
  });

  it('attempts a non-transient failure exactly once', async () => {
    await fault(1, 'permission_denied');
    const { status, body } = await call(
      logMood,
      { user_id: 'user_denied', mood: 'happy', energy_level: 5, timestamp: uniqueTimestamp() },
      faultyEnv(),
      fast,
    );
    expect(status).toBe(500);
    expect(body.error).toMatchObject({ code: 'DATABASE_ERROR', retryable: false, details: { sqlstate: '42501' } });
    expect(body.meta.attempts).toBe(1);
  });

  it('completes a slow execution with a performance warning', async () => {
    const { tool } = holdingTool();
    const { status, body } = await call(tool, { hold_ms: 120 }, { ...env }, { slowCallMs: 50 });
    expect(status).toBe(200);
    expect(body.meta.performance_warning).toBe(true);
    // Under the threshold (a generous one: machine speed is not what is tested here): no warning.
    const quick = await call(tool, { hold_ms: 0 }, { ...env }, { slowCallMs: 30_000 });
    expect(quick.body.meta.performance_warning).toBe(false);
  });
});
