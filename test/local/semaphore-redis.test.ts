/**
 * The RedisSemaphore's own mechanics, through the Upstash stand-in: a release handing its slot to
 * the next waiter in the same script, crashed holders and silent waiters reaped, a lease reaped in
 * Redis lapsing for good, idempotent acquires, Redis stopped or unreachable (refusals, never over
 * the limit), BLPOP fallbacks, and the cap on a waiting call's requests.
 */
import { describe, expect, it, vi } from 'vitest';
import { startRedisServer, startUpstashStandIn } from '../../local/upstash-rest.ts';
import {
  RedisSemaphore,
  type Acquired,
  type RedisSemaphoreOptions,
  type Refused,
  type SemaphoreRedis,
} from '../../shared/concurrency/semaphore.ts';
import { ACQUIRE_SCRIPT } from '../../shared/concurrency/semaphore-lua.ts';
import {
  acquireOk,
  direct,
  FAST,
  goneKey,
  holdersKey,
  keysOf,
  nextPrefix,
  redis,
  sleep,
  start,
  TOKEN,
  upstashClient,
  useRedis,
  WAIT,
} from './semaphore-fixture.ts';

const redisServer = await useRedis();

describe.skipIf(!redisServer)('RedisSemaphore hand-over and failure handling', () => {
  /** A second endpoint over the same redis-server, to play an isolate that dies. */
  async function doomedClient() {
    const endpoint = await startUpstashStandIn({ redisPort: redisServer!.port, token: TOKEN });
    return { redis: upstashClient(endpoint.url), crash: () => endpoint.close() };
  }

  const semaphore = (options: Partial<RedisSemaphoreOptions> & { prefix: string }) =>
    new RedisSemaphore({ redis, limit: 10, ...FAST, ...options });

  it('release hands the slot to the next waiter in the same script, before that waiter polls again', async () => {
    const prefix = nextPrefix();
    // The waiter's polls after its first are held back until the test lets them go: the hand-over cannot come from them.
    let polls = 0;
    let letPollsGo!: () => void;
    const pollsMayGo = new Promise<void>((resolve) => (letPollsGo = resolve));
    const pollsHeldBack: SemaphoreRedis = {
      exec: redis.exec.bind(redis) as SemaphoreRedis['exec'],
      createScript: ((source: string) => {
        const script = redis.createScript(source);
        if (source !== ACQUIRE_SCRIPT) return script; // a poll is an ACQUIRE
        return {
          exec: async (keys: string[], args: string[]) => {
            if (polls++ > 0) await pollsMayGo;
            return script.exec(keys, args);
          },
        };
      }) as unknown as SemaphoreRedis['createScript'],
    };
    const holder = await acquireOk(semaphore({ prefix, limit: 1 }), 'holder');
    const waiter = start(semaphore({ prefix, limit: 1, wake: 'poll', redis: pollsHeldBack }), 'waiter', { timeoutMs: 10_000 });
    await waiter.queued;
    await holder.permit.release();
    expect(await direct.zrange(holdersKey(prefix), '0', '-1')).toEqual(['waiter']);
    expect(await direct.zcard(`{${prefix}}:queue`)).toBe(0);
    expect(await direct.lrange(`{${prefix}}:wake:waiter`, 0, -1)).toEqual(['1']);
    letPollsGo();
    const admitted = await waiter.result;
    expect(admitted).toMatchObject({ ok: true, queueDepth: 0 });
    await (admitted as Acquired).permit.release();
    expect(await keysOf(prefix)).toEqual([]);
  });

  it('crashed holders: their slots come back when the lease expires, nothing leaks', async () => {
    const prefix = nextPrefix();
    const doomed = await doomedClient();
    const dying = new RedisSemaphore({ redis: doomed.redis, prefix, limit: 3, ...FAST, leaseMs: 600 });
    const crashed = await Promise.all([0, 1, 2].map((i) => acquireOk(dying, `crashed-${i}`)));
    await doomed.crash(); // no renewals, no releases reach Redis any more
    expect(await direct.zcard(holdersKey(prefix))).toBe(3);

    const healthy = semaphore({ prefix, limit: 3, leaseMs: 600 });
    const survivors = await Promise.all([0, 1, 2].map((i) => healthy.acquire(`survivor-${i}`, { timeoutMs: 10_000 })));
    expect(survivors.every((r) => r.ok)).toBe(true);
    await vi.waitFor(() => expect(crashed.every((c) => c.permit.lapse()?.reason === 'unconfirmed')).toBe(true), WAIT);
    await Promise.all(crashed.map((c) => c.permit.release())); // resolves although its Redis is gone
    await Promise.all(survivors.map((r) => (r as Acquired).permit.release()));
    expect(await keysOf(prefix)).toEqual([]);
  });

  it('a lease reaped in Redis lapses for good: the next renewal learns the slot was taken back', async () => {
    const prefix = nextPrefix();
    const permit = (await acquireOk(semaphore({ prefix, leaseMs: 300 }), 'victim')).permit;
    await direct.zrem(holdersKey(prefix), 'victim'); // as if the lease had expired and been reaped
    await vi.waitFor(
      () => expect(permit.lapse()).toMatchObject({ reason: 'taken_back', detail: expect.stringMatching(/taken back/) }),
      WAIT,
    );
    await permit.release();
    // It held nothing when it left: only its tombstone remains, until it expires.
    expect(await keysOf(prefix)).toEqual([goneKey(prefix)]);
    expect(await direct.zrange(goneKey(prefix), '0', '-1')).toEqual(['victim']);
  });

  it('a waiter that stops polling is reaped and the queue behind it moves on', async () => {
    const prefix = nextPrefix();
    const healthy = semaphore({ prefix, limit: 1 });
    const doomed = await doomedClient();
    const holder = await acquireOk(healthy, 'holder');
    // It announces a short liveness deadline, so that it is reaped within the test.
    const dead = start(new RedisSemaphore({ redis: doomed.redis, prefix, limit: 1, ...FAST, livenessGraceMs: 500 }), 'dead');
    expect(await dead.queued).toBe(0);
    const live = start(healthy, 'live', { timeoutMs: 10_000 });
    expect(await live.queued).toBe(1);

    await doomed.crash(); // 'dead' can neither poll nor leave: it stays queued until reaped
    expect(await dead.result).toMatchObject({ ok: false, reason: 'unavailable' });
    const queueKey = `{${prefix}}:queue`;
    expect(await direct.zscore(queueKey, 'dead')).not.toBeNull();
    // The live waiter's polls reap it once its liveness deadline passes, while the slot is still held.
    await vi.waitFor(async () => expect(await direct.zrange(queueKey, '0', '-1')).toEqual(['live']), WAIT);
    expect(await direct.zrange(holdersKey(prefix), '0', '-1')).toEqual(['holder']);
    await holder.permit.release();
    const admitted = await live.result;
    expect(admitted).toMatchObject({ ok: true, queueDepth: 1 });
    await (admitted as Acquired).permit.release();
    expect(await keysOf(prefix)).toEqual([]);
  });

  it('acquire is idempotent per call id: a retried request holds one slot', async () => {
    const prefix = nextPrefix();
    const sem = semaphore({ prefix, limit: 2 });
    const first = await acquireOk(sem, 'same-call');
    const retried = await acquireOk(sem, 'same-call');
    expect(await direct.zcard(holdersKey(prefix))).toBe(1);
    await first.permit.release();
    expect(await keysOf(prefix)).toEqual([]);
    await retried.permit.release(); // holds nothing any more: leaves a tombstone
    expect(await keysOf(prefix)).toEqual([goneKey(prefix)]);
  });

  it('Redis stopped mid-run: unavailable refusals, never over the limit', async () => {
    const server = (await startRedisServer())!;
    const endpoint = await startUpstashStandIn({ redisPort: server.port, token: TOKEN });
    try {
      const sem = new RedisSemaphore({ redis: upstashClient(endpoint.url), prefix: nextPrefix(), limit: 5, ...FAST });
      let running = 0;
      let maxRunning = 0;
      let grants = 0;
      const calls = Array.from({ length: 30 }, async (_, i) => {
        const result = await sem.acquire(`call-${i}`, { timeoutMs: 10_000 });
        if (!result.ok) return result;
        grants++;
        maxRunning = Math.max(maxRunning, ++running);
        await sleep(30 + (i % 5) * 20);
        running--;
        await result.permit.release();
        return result;
      });
      await vi.waitFor(() => expect(grants).toBeGreaterThanOrEqual(8), WAIT);
      await server.stop();
      const refused = (await Promise.all(calls)).filter((r) => !r.ok);
      expect(refused.length).toBeGreaterThan(0);
      expect(refused.map((r) => r.reason)).toEqual(refused.map(() => 'unavailable'));
      expect(maxRunning).toBeLessThanOrEqual(5);
      const late = await sem.acquire('late');
      expect(late).toMatchObject({ ok: false, reason: 'unavailable' });
      expect((late as Refused).retryAfterMs).toBeGreaterThan(0);
    } finally {
      await endpoint.close();
      await server.stop();
    }
  });

  it('an unreachable endpoint is an unavailable refusal, not an exception', async () => {
    const sem = new RedisSemaphore({ redis: upstashClient('http://127.0.0.1:9'), prefix: nextPrefix(), ...FAST });
    const result = await sem.acquire('lonely');
    expect(result).toMatchObject({ ok: false, reason: 'unavailable', detail: expect.stringMatching(/backend failed/) });
  });

  it.each([
    ['is refused', () => Promise.reject(new Error("ERR unknown command 'blpop'"))],
    ['answers at once without blocking', () => Promise.resolve(null)],
  ])('falls back to polling when BLPOP %s', async (_, blpop) => {
    const prefix = nextPrefix();
    const noBlocking: SemaphoreRedis = {
      createScript: (script) => redis.createScript(script),
      exec: (() => blpop()) as SemaphoreRedis['exec'],
    };
    const sem = new RedisSemaphore({ redis: noBlocking, prefix, limit: 2, ...FAST });
    const results = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const result = await sem.acquire(`call-${i}`);
        if (result.ok) {
          await sleep(20 + i * 5);
          await result.permit.release();
        }
        return result;
      }),
    );
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(await keysOf(prefix)).toEqual([]);
  });

  it.each(['blpop', 'poll'] as const)('a waiting call stays within its Redis request cap (%s)', async (wake) => {
    const prefix = nextPrefix();
    const sem = semaphore({ prefix, limit: 1, wake, maxRequestsPerAcquire: 8, pollMinMs: 5, blockMs: 50 });
    const holder = await acquireOk(sem, 'holder');
    // Long enough for several waits on a busy machine; uncapped, they would take dozens of requests.
    const result = await sem.acquire('waiter', { timeoutMs: 4_000 });
    expect(result).toMatchObject({ ok: false, reason: 'timeout' });
    expect(result.requests).toBeGreaterThan(2);
    expect(result.requests).toBeLessThanOrEqual(8);
    await holder.permit.release();
    expect(await keysOf(prefix)).toEqual([]);
  });
});
