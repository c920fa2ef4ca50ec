/**
 * Redis frozen (SIGSTOP) and killed under calls, through the real pipeline in workerd. The Redis
 * here is the test setup's second one (test/setup/redis-faults.ts), driven over HTTP, so freezing
 * it never stalls the other suites.
 *
 * What must hold: never more than the limit running; a call that was answered holds no slot once
 * its background work is done; and after the fault, new calls find the slots free.
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { Redis } from '@upstash/redis';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createGateway } from '../../shared/http/app.ts';
import type { Env } from '../../shared/runtime/env.ts';
import { holdingTool, tenantA } from './helpers.ts';

const services = env.TEST_SERVICES;
const hasRedis = services.redisControlUrl !== '';
if (!hasRedis) console.warn('!!! redis-server is not installed: the Redis fault suites below are SKIPPED.');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const redis = hasRedis ? new Redis({ url: services.faultyRedisUrl, token: services.faultyRedisToken, retry: false }) : undefined;

async function redisFault(action: 'freeze' | 'thaw' | 'kill' | 'restart'): Promise<void> {
  const response = await fetch(services.redisControlUrl, { method: 'POST', body: JSON.stringify({ action }) });
  if (!response.ok) throw new Error(`redis control ${action}: ${await response.text()}`);
}

let namespaces = 0;
function faultyEnv(): Env & { CONCURRENCY_NAMESPACE: string } {
  return {
    ...env,
    UPSTASH_REDIS_REST_URL: services.faultyRedisUrl,
    UPSTASH_REDIS_REST_TOKEN: services.faultyRedisToken,
    CONCURRENCY_NAMESPACE: `faults-${Date.now()}-${namespaces++}`,
  };
}

type Sent = { answer: Promise<{ status: number; body: Record<string, any> }>; settled: Promise<void> };

/** Sends a call; `answer` resolves with the response, `settled` once its background work (waitUntil) is done too. */
function send(gateway: ReturnType<typeof createGateway>, body: unknown, callEnv: Env): Sent {
  const ctx = createExecutionContext();
  const answer = Promise.resolve(
    gateway.fetch(
      new Request('http://edge-tools.test/tools/hold', {
        method: 'POST',
        headers: { authorization: `Bearer ${tenantA.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
      callEnv,
      ctx,
    ),
  ).then(async (response) => ({ status: response.status, body: (await response.json()) as Record<string, any> }));
  return { answer, settled: answer.then(() => waitOnExecutionContext(ctx)) };
}

/** Holders and waiters of a namespace's semaphore, read straight from Redis. */
async function occupancy(namespace: string): Promise<{ holders: number; queued: number }> {
  const tag = `{${namespace}:semaphore}`;
  const [holders, queued] = await Promise.all([redis!.zcard(`${tag}:holders`), redis!.zcard(`${tag}:queue`)]);
  return { holders, queued };
}

describe.skipIf(!hasRedis)('Redis faults through the pipeline', () => {
  let logs: Record<string, any>[];
  beforeEach(() => {
    logs = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => void logs.push(JSON.parse(line)));
    vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await redisFault('thaw');
  });

  it('calls answered BUSY while Redis was frozen hold no slot once it thaws; new calls find every slot free', async () => {
    const { tool, state } = holdingTool();
    const gateway = createGateway([tool]);
    const callEnv = faultyEnv();
    await redisFault('freeze');
    const refused = Array.from({ length: 12 }, () => send(gateway, { hold_ms: 100 }, callEnv));
    const answers = await Promise.all(refused.map((call) => call.answer));
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(503));
    for (const { body } of answers) expect(body.error).toMatchObject({ code: 'BUSY', retryable: true, details: { reason: 'unavailable' } });
    expect(state.started).toHaveLength(0);

    // Each answered call's leave waits (in waitUntil) for the frozen Redis, rather than giving up.
    let settled = false;
    const settling = Promise.all(refused.map((call) => call.settled)).then(() => (settled = true));
    await sleep(300);
    expect(settled).toBe(false);

    // Redis now runs every ACQUIRE it was sent during the freeze, each from a call already answered,
    // and the leaves that follow them.
    await redisFault('thaw');
    await settling;
    expect(await occupancy(callEnv.CONCURRENCY_NAMESPACE)).toEqual({ holders: 0, queued: 0 });

    logs.length = 0;
    const fresh = Array.from({ length: 10 }, () => send(gateway, { hold_ms: 300 }, callEnv));
    const freshAnswers = await Promise.all(fresh.map((call) => call.answer));
    expect(freshAnswers.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(logs.filter((entry) => entry.event === 'queued')).toEqual([]);
    await Promise.all(fresh.map((call) => call.settled));
    expect(await occupancy(callEnv.CONCURRENCY_NAMESPACE)).toEqual({ holders: 0, queued: 0 });
  }, 60_000);

  it('Redis frozen mid-call: the holders finish and answer their own results; calls arriving meanwhile do not run; nothing stays held', async () => {
    const { tool, state } = holdingTool();
    const gateway = createGateway([tool]);
    const callEnv = faultyEnv();
    const holders = Array.from({ length: 10 }, () => send(gateway, { hold_ms: 20_000, gated: true }, callEnv));
    await vi.waitFor(() => expect(state.running).toBe(10), { timeout: 20_000, interval: 20 });
    await redisFault('freeze');
    const during = Array.from({ length: 5 }, () => send(gateway, { hold_ms: 0 }, callEnv));
    const duringAnswers = await Promise.all(during.map((call) => call.answer));
    for (const { status, body } of duringAnswers) {
      expect(status).toBe(503);
      expect(body.error).toMatchObject({ code: 'BUSY', details: { reason: 'unavailable' } });
      expect(body.error.message).toMatch(/did not run/);
    }
    // The holders finish while Redis is still frozen: their work is done, and they say so.
    state.release();
    const holderAnswers = await Promise.all(holders.map((call) => call.answer));
    for (const { status, body } of holderAnswers) {
      expect(status).toBe(200);
      expect(body.data).toEqual({ held_ms: 20_000 });
      for (const warning of body.meta.warnings ?? []) expect(warning.code).toBe('lease_lost');
    }
    expect(state.started).toHaveLength(10);
    expect(state.maxRunning).toBe(10);

    await redisFault('thaw');
    await Promise.all([...holders, ...during].map((call) => call.settled));
    expect(await occupancy(callEnv.CONCURRENCY_NAMESPACE)).toEqual({ holders: 0, queued: 0 });
    const after = await Promise.all(Array.from({ length: 10 }, () => send(gateway, { hold_ms: 50 }, callEnv).answer));
    expect(after.map((a) => a.status)).toEqual(Array(10).fill(200));
  }, 60_000);

  it('Redis killed under load: never more than the limit running, every call answered, slots free once it is back', async () => {
    const { tool, state } = holdingTool();
    const gateway = createGateway([tool]);
    const callEnv = faultyEnv();
    const load = Array.from({ length: 25 }, (_, i) => send(gateway, { hold_ms: 200 + (i % 5) * 100 }, callEnv));
    await vi.waitFor(() => expect(state.started.length).toBeGreaterThanOrEqual(5), { timeout: 10_000, interval: 10 });
    await redisFault('kill');
    const answers = await Promise.all(load.map((call) => call.answer));
    for (const { status, body } of answers) {
      if (status === 200) continue;
      expect(status).toBe(503);
      expect(body.error.code).toBe('BUSY');
      expect(['unavailable', 'lease_lost', 'timeout']).toContain(body.error.details.reason);
    }
    expect(state.maxRunning).toBeLessThanOrEqual(10);
    const refusedWhileDown = await send(gateway, { hold_ms: 0 }, callEnv).answer;
    expect(refusedWhileDown.body.error).toMatchObject({ code: 'BUSY', details: { reason: 'unavailable' } });

    await redisFault('restart');
    await Promise.all(load.map((call) => call.settled));
    logs.length = 0;
    const after = await Promise.all(Array.from({ length: 10 }, () => send(gateway, { hold_ms: 100 }, callEnv).answer));
    expect(after.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(logs.filter((entry) => entry.event === 'queued')).toEqual([]);
    expect(state.maxRunning).toBeLessThanOrEqual(10);
  }, 60_000);

  it('readiness answers 503 while Redis is frozen or killed, and 200 again once it is back', async () => {
    const gateway = createGateway([holdingTool().tool]);
    const ready = async () => {
      const ctx = createExecutionContext();
      const response = await gateway.fetch(new Request('http://edge-tools.test/health/ready'), faultyEnv(), ctx);
      await waitOnExecutionContext(ctx);
      return { status: response.status, body: (await response.json()) as Record<string, any> };
    };
    expect((await ready()).status).toBe(200);
    await redisFault('freeze');
    // (An answer is reused for a second, so the first probe after the freeze may still be the old one.)
    await vi.waitFor(
      async () => {
        const frozen = await ready();
        expect(frozen.status).toBe(503);
        expect(frozen.body.error).toMatchObject({ code: 'BUSY', details: { checks: { redis: { status: 'down' } } } });
      },
      { timeout: 15_000, interval: 200 },
    );
    await redisFault('thaw');
    await vi.waitFor(async () => expect((await ready()).status).toBe(200), { timeout: 10_000, interval: 200 });
    await redisFault('kill');
    await vi.waitFor(async () => expect((await ready()).status).toBe(503), { timeout: 10_000, interval: 200 });
    await redisFault('restart');
    await vi.waitFor(async () => expect((await ready()).status).toBe(200), { timeout: 10_000, interval: 200 });
  }, 60_000);
});
