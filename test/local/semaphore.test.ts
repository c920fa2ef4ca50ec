import { Redis } from '@upstash/redis';
import { Redis as DirectRedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startRedisServer, startUpstashStandIn } from '../../local/upstash-rest.ts';
import { MemorySemaphore } from '../../shared/concurrency/memory-semaphore.ts';
import {
  RedisSemaphore,
  SEMAPHORE_REDIS_RETRY,
  type Acquired,
  type AcquireOptions,
  type RedisSemaphoreOptions,
  type Refused,
  type Semaphore,
  type SemaphoreRedis,
} from '../../shared/concurrency/semaphore.ts';
import { ACQUIRE_SCRIPT } from '../../shared/concurrency/semaphore-lua.ts';

const TOKEN = 'semaphore-test';
const redisServer = await startRedisServer();
if (!redisServer) {
  console.warn('\n*** redis-server is not installed: SKIPPING every RedisSemaphore test (MemorySemaphore still runs) ***\n');
}

/**
 * Short waits keep the suite fast; production uses SEMAPHORE_DEFAULTS. Everything that would end a
 * slot, a place in the queue or a request on its own (leases, the time a woken waiter has to claim
 * its slot, the liveness grace, request and leave timeouts) is a ceiling as long as a test may run:
 * a process starved of CPU on a busy machine, where a request through the stand-in can take
 * seconds, keeps its slots and its place, and a release resolves once Redis ran it. Tests that need
 * a lease or a liveness deadline to run out set their own. A waiter blocks for a second between
 * polls (a hand-over wakes it at once): 90 waiters polling five times a second kept the stand-in,
 * which runs in the test's own process, too busy to answer on a loaded machine.
 */
const FAST = {
  leaseMs: 60_000,
  firstLeaseMs: 60_000,
  blockMs: 1_000,
  livenessGraceMs: 60_000,
  pollMaxMs: 200,
  requestTimeoutMs: 20_000,
  leaveWaitMs: 20_000,
};
/** A ceiling for what a test waits for, not a measure. */
const WAIT = { timeout: 20_000, interval: 5 };

let standIn: Awaited<ReturnType<typeof startUpstashStandIn>> | undefined;
/** The semaphore's client: @upstash/redis -> stand-in -> redis-server. */
let redis: Redis;
/** An independent view of Redis (a direct TCP client) for samplers and leak checks. */
let direct: DirectRedis;

beforeAll(async () => {
  if (!redisServer) return;
  standIn = await startUpstashStandIn({ redisPort: redisServer.port, token: TOKEN });
  redis = upstashClient(standIn.url);
  direct = new DirectRedis({ host: '127.0.0.1', port: redisServer.port, lazyConnect: true });
  await direct.connect();
});

afterAll(async () => {
  direct?.disconnect();
  await standIn?.close();
  await redisServer?.stop();
});

function upstashClient(url: string): Redis {
  return new Redis({ url, token: TOKEN, retry: SEMAPHORE_REDIS_RETRY, enableTelemetry: false });
}

let prefixes = 0;
const nextPrefix = () => `test-semaphore-${++prefixes}`;
const holdersKey = (prefix: string) => `{${prefix}}:holders`;
const goneKey = (prefix: string) => `{${prefix}}:gone`;
/** Every key the semaphore under `prefix` left in Redis. */
const keysOf = (prefix: string) => direct.keys(`{${prefix}}*`);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts an acquire and exposes when it queued (its position) and how it ended. */
function start(semaphore: Semaphore, callId: string, options: AcquireOptions = {}) {
  let onQueued!: (position: number) => void;
  const queued = new Promise<number>((resolve) => (onQueued = resolve));
  const result = semaphore.acquire(callId, { ...options, onQueued });
  return { queued, result };
}

async function acquireOk(semaphore: Semaphore, callId: string): Promise<Acquired> {
  const result = await semaphore.acquire(callId);
  if (!result.ok) throw new Error(`expected a slot for ${callId}: ${result.detail}`);
  return result;
}

type Harness = {
  semaphore: Semaphore;
  /** Holders as Redis sees them (an independent view); absent for the in-process semaphore. */
  holdersInBackend?: () => Promise<number>;
  /** What the semaphore left behind in its backend. */
  leftovers(): Promise<string[]>;
};

type Subject = { name: string; needsRedis: boolean; make(options: { limit: number }): Harness };

const SUBJECTS: Subject[] = [
  {
    name: 'MemorySemaphore',
    needsRedis: false,
    make: ({ limit }) => ({ semaphore: new MemorySemaphore({ limit }), leftovers: async () => [] }),
  },
  ...(['blpop', 'poll'] as const).map((wake) => ({
    name: `RedisSemaphore (${wake === 'blpop' ? 'BLPOP wake-up' : 'polling'})`,
    needsRedis: true,
    make: ({ limit }: { limit: number }): Harness => {
      const prefix = nextPrefix();
      return {
        semaphore: new RedisSemaphore({ redis, prefix, limit, wake, ...FAST }),
        holdersInBackend: () => direct.zcard(holdersKey(prefix)),
        leftovers: () => keysOf(prefix),
      };
    },
  })),
];

for (const subject of SUBJECTS) {
  describe.skipIf(subject.needsRedis && !redisServer)(subject.name, () => {
    it('15 simultaneous calls: 10 run at once, 5 queue and run in FIFO order, all succeed', async () => {
      const { semaphore, holdersInBackend, leftovers } = subject.make({ limit: 10 });
      const granted: { call: number; result: Acquired }[] = [];
      const queuedAt = new Map<number, number>();
      const calls = Array.from({ length: 15 }, (_, call) =>
        semaphore.acquire(`call-${call}`, { onQueued: (position) => queuedAt.set(call, position) }).then((result) => {
          if (result.ok) granted.push({ call, result });
          return result;
        }),
      );
      await vi.waitFor(() => {
        expect(granted).toHaveLength(10);
        expect(queuedAt.size).toBe(5);
      }, WAIT);
      expect(granted.map((g) => g.result.queueDepth)).toEqual(Array(10).fill(0));
      expect([...queuedAt.values()].sort()).toEqual([0, 1, 2, 3, 4]);
      if (holdersInBackend) expect(await holdersInBackend()).toBe(10);

      // Free one slot at a time: each must go to the oldest waiter.
      for (let k = 0; k < 5; k++) {
        await granted[k]!.result.permit.release();
        await vi.waitFor(() => expect(granted).toHaveLength(11 + k), WAIT);
        const admitted = granted[10 + k]!;
        expect(queuedAt.get(admitted.call)).toBe(k);
        expect(admitted.result.queueDepth).toBe(k);
        if (holdersInBackend) expect(await holdersInBackend()).toBe(10);
      }
      await Promise.all(granted.slice(5).map((g) => g.result.permit.release()));
      expect((await Promise.all(calls)).every((r) => r.ok)).toBe(true);
      expect(await leftovers()).toEqual([]);
    });

    it('100 concurrent callers holding 50–200 ms: never more than 10 holders, all complete, nothing left', async () => {
      const { semaphore, holdersInBackend, leftovers } = subject.make({ limit: 10 });
      let running = 0;
      let maxRunning = 0;
      const lapses: string[] = [];
      let maxSampled = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling && holdersInBackend) {
          maxSampled = Math.max(maxSampled, await holdersInBackend());
          await sleep(2);
        }
      })();
      const results = await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          const result = await semaphore.acquire(`caller-${i}`);
          if (!result.ok) return result;
          maxRunning = Math.max(maxRunning, ++running);
          await sleep(50 + Math.random() * 150);
          running--;
          // A lease runs out only after FAST.leaseMs without a confirmed renewal, longer than this test may run.
          const lapse = result.permit.lapse();
          if (lapse) lapses.push(`caller-${i}: ${lapse.reason}`);
          await result.permit.release();
          return result;
        }),
      );
      sampling = false;
      await sampler;
      expect(results.filter((r) => !r.ok).map((r) => `${(r as Refused).reason}: ${(r as Refused).detail}`)).toEqual([]);
      expect(lapses).toEqual([]);
      expect(maxRunning).toBeLessThanOrEqual(10);
      expect(maxRunning).toBeGreaterThan(0);
      if (holdersInBackend) {
        // The independent view saw holders, and never more than the limit.
        expect(maxSampled).toBeLessThanOrEqual(10);
        expect(maxSampled).toBeGreaterThan(0);
      }
      expect(await leftovers()).toEqual([]);
      // A ceiling for a hung test: beside seven spinners the BLPOP run took up to 12.5 s.
    }, 60_000);

    it('queue timeout: refused with position and retryAfterMs; it gives up its place', async () => {
      const { semaphore, leftovers } = subject.make({ limit: 2 });
      const holders = [await acquireOk(semaphore, 'holder-1'), await acquireOk(semaphore, 'holder-2')];
      // The impatient call queues behind one that cannot leave before it: its position is known.
      const patient = start(semaphore, 'patient', { timeoutMs: 20_000 });
      expect(await patient.queued).toBe(0);
      const impatient = start(semaphore, 'impatient', { timeoutMs: 150 });
      expect(await impatient.queued).toBe(1);

      const refusal = (await impatient.result) as Refused;
      expect(refusal).toMatchObject({ ok: false, reason: 'timeout', position: 1 });
      expect(refusal.retryAfterMs).toBeGreaterThan(0);
      expect(refusal.detail).toMatch(/no slot within 150 ms/);
      // Its place is given up: the next call queues right behind the patient one.
      const late = start(semaphore, 'late', { timeoutMs: 20_000 });
      expect(await late.queued).toBe(1);

      await holders[0]!.permit.release();
      const admitted = await patient.result;
      expect(admitted).toMatchObject({ ok: true, queueDepth: 0 });
      await holders[1]!.permit.release();
      const next = await late.result;
      expect(next).toMatchObject({ ok: true, queueDepth: 1 });
      await Promise.all([admitted, next].map((r) => (r as Acquired).permit.release()));
      expect(await leftovers()).toEqual([]);
    });

    it('abort: a queued call is refused as aborted and gives up its place', async () => {
      const { semaphore, leftovers } = subject.make({ limit: 1 });
      const holder = await acquireOk(semaphore, 'holder');
      const controller = new AbortController();
      const waiter = start(semaphore, 'waiter', { signal: controller.signal });
      await waiter.queued;
      controller.abort();
      expect(await waiter.result).toMatchObject({ ok: false, reason: 'aborted', retryAfterMs: 0 });
      expect(await semaphore.acquire('too-late', { signal: AbortSignal.abort() })).toMatchObject({ ok: false, reason: 'aborted' });

      await holder.permit.release();
      const next = await acquireOk(semaphore, 'next');
      expect(next.queueDepth).toBe(0);
      await next.permit.release();
      expect(await leftovers()).toEqual([]);
    });

    it('release is idempotent and the slot is reusable', async () => {
      const { semaphore, leftovers } = subject.make({ limit: 1 });
      const first = await acquireOk(semaphore, 'first');
      await first.permit.release();
      await first.permit.release();
      const second = await acquireOk(semaphore, 'second');
      expect(second.queueDepth).toBe(0);
      expect(second.permit.lapse()).toBeUndefined();
      await second.permit.release();
      expect(await leftovers()).toEqual([]);
    });
  });
}

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

describe.skipIf(!redisServer)('RedisSemaphore under Redis faults: an answered call holds no slot', () => {
  const isAcquire = (source: string) => source.includes("'INCR', seq");
  const isRelease = (source: string) => source.includes('tombstoneMs, id');

  /**
   * A client whose ACQUIREs are held back until `deliver()` (a request stuck on its way, which the
   * caller gave up on) and, with `failReleases`, whose RELEASEs never arrive (the isolate is gone).
   */
  function intercepted({ failReleases = false } = {}) {
    const heldBack: (() => Promise<unknown>)[] = [];
    const client: SemaphoreRedis = {
      exec: redis.exec.bind(redis) as SemaphoreRedis['exec'],
      createScript: ((source: string) => {
        const script = redis.createScript(source);
        if (isAcquire(source)) {
          return {
            exec: (keys: string[], args: string[]) =>
              new Promise((resolve, reject) => heldBack.push(() => script.exec(keys, args).then(resolve, reject))),
          };
        }
        if (isRelease(source) && failReleases) return { exec: () => Promise.reject(new Error('fetch failed')) };
        return script;
      }) as unknown as SemaphoreRedis['createScript'],
    };
    return { client, deliver: () => Promise.allSettled(heldBack.splice(0).map((send) => send())) };
  }

  const withLimit = (prefix: string, limit: number) => new RedisSemaphore({ redis, prefix, limit, ...FAST });

  /** Acquires, collecting the work it leaves running in the background. */
  async function acquireCollecting(semaphore: Semaphore, callId: string) {
    const background: Promise<unknown>[] = [];
    const result = await semaphore.acquire(callId, { waitUntil: (work) => void background.push(work) });
    return { result, background: Promise.all(background) };
  }

  /** Milliseconds left on `callId`'s lease, by Redis's own clock. */
  async function leaseLeftMs(prefix: string, callId: string): Promise<number> {
    const [deadline, [seconds, micros]] = await Promise.all([direct.zscore(holdersKey(prefix), callId), direct.time()]);
    return Number(deadline) - (Number(seconds) * 1000 + Math.floor(Number(micros) / 1000));
  }

  it('an ACQUIRE that arrives after its call left takes nothing: the leave left a tombstone', async () => {
    const prefix = nextPrefix();
    const { client, deliver } = intercepted();
    const sem = new RedisSemaphore({ redis: client, prefix, limit: 1, ...FAST, requestTimeoutMs: 100 });
    const { result, background } = await acquireCollecting(sem, 'late');
    expect(result).toMatchObject({ ok: false, reason: 'unavailable' });
    await background; // the leave reached Redis before the ACQUIRE did
    expect(await direct.zrange(goneKey(prefix), '0', '-1')).toEqual(['late']);

    await deliver();
    expect(await direct.zcard(holdersKey(prefix))).toBe(0);
    expect(await direct.zcard(`{${prefix}}:queue`)).toBe(0);
    const next = await acquireOk(new RedisSemaphore({ redis, prefix, limit: 1, ...FAST }), 'next');
    expect(next.queueDepth).toBe(0);
    await next.permit.release();
  });

  it('a grant nobody takes up (its leave lost with the isolate) holds its slot for the short first lease only', async () => {
    const prefix = nextPrefix();
    const settings = { ...FAST, limit: 1, leaseMs: 20_000, firstLeaseMs: 600 };
    const { client, deliver } = intercepted({ failReleases: true });
    const sem = new RedisSemaphore({ redis: client, prefix, ...settings, requestTimeoutMs: 100, leaveWaitMs: 300 });
    const { result, background } = await acquireCollecting(sem, 'orphan');
    expect(result).toMatchObject({ ok: false, reason: 'unavailable' });
    await background; // every leave failed

    await deliver(); // the ACQUIRE lands now: a slot for a caller that is gone
    expect(await direct.zrange(holdersKey(prefix), '0', '-1')).toEqual(['orphan']);
    const left = await leaseLeftMs(prefix, 'orphan');
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(600);
    // Then the slot comes back to whoever waits for it.
    const next = await new RedisSemaphore({ redis, prefix, ...settings }).acquire('next', { timeoutMs: 10_000 });
    expect(next).toMatchObject({ ok: true, queueDepth: 0 });
    expect(await direct.zrange(holdersKey(prefix), '0', '-1')).toEqual(['next']);
    // A grant that is taken up gets the full lease at its first renewal.
    await vi.waitFor(async () => expect(await leaseLeftMs(prefix, 'next')).toBeGreaterThan(600), WAIT);
    await (next as Acquired).permit.release();
  });

  it('Redis frozen: refused calls keep leaving until it thaws, so their late grants are undone at once', async () => {
    const server = (await startRedisServer())!;
    const endpoint = await startUpstashStandIn({ redisPort: server.port, token: TOKEN });
    const frozenView = new DirectRedis({ host: '127.0.0.1', port: server.port, lazyConnect: true });
    try {
      const prefix = nextPrefix();
      const sem = new RedisSemaphore({
        redis: upstashClient(endpoint.url),
        prefix,
        limit: 2,
        ...FAST,
        requestTimeoutMs: 300,
        leaveWaitMs: 20_000,
      });
      process.kill(server.pid, 'SIGSTOP');
      const calls = await Promise.all([0, 1, 2].map((i) => acquireCollecting(sem, `frozen-${i}`)));
      expect(calls.map((c) => c.result)).toMatchObject(calls.map(() => ({ ok: false, reason: 'unavailable' })));
      let left = false;
      const leaving = Promise.all(calls.map((c) => c.background)).then(() => (left = true));
      await sleep(200);
      expect(left).toBe(false); // still waiting on the frozen Redis, not given up

      process.kill(server.pid, 'SIGCONT');
      await leaving;
      await frozenView.connect();
      expect(await frozenView.zcard(holdersKey(prefix))).toBe(0);
      expect(await frozenView.zcard(`{${prefix}}:queue`)).toBe(0);
      const fresh = await Promise.all(['a', 'b'].map((id) => sem.acquire(id)));
      expect(fresh).toMatchObject([
        { ok: true, queueDepth: 0 },
        { ok: true, queueDepth: 0 },
      ]);
      await Promise.all(fresh.map((r) => (r as Acquired).permit.release()));
    } finally {
      process.kill(server.pid, 'SIGCONT');
      frozenView.disconnect();
      await endpoint.close();
      await server.stop();
    }
  });

  it('a holder whose renewals get no answer reports its lease unconfirmed once it runs out, and vouched for again by a late answer', async () => {
    const server = (await startRedisServer())!;
    const endpoint = await startUpstashStandIn({ redisPort: server.port, token: TOKEN });
    try {
      const prefix = nextPrefix();
      const sem = new RedisSemaphore({ redis: upstashClient(endpoint.url), prefix, ...FAST, leaseMs: 900, firstLeaseMs: 300 });
      const { permit } = await acquireOk(sem, 'holder');
      process.kill(server.pid, 'SIGSTOP');
      await vi.waitFor(
        () =>
          expect(permit.lapse()).toMatchObject({
            reason: 'unconfirmed',
            detail: expect.stringMatching(/no renewal was confirmed before the lease ran out/),
          }),
        WAIT,
      );
      process.kill(server.pid, 'SIGCONT');
      // Nobody reaped the slot meanwhile: the renewals sent during the freeze extend it when they land.
      await vi.waitFor(() => expect(permit.lapse()).toBeUndefined(), WAIT);
      await permit.release();
    } finally {
      process.kill(server.pid, 'SIGCONT');
      await endpoint.close();
      await server.stop();
    }
  });

  it('Redis frozen for longer than a lease: the holders keep their slots, the waiter waits for a release', async () => {
    const server = (await startRedisServer())!;
    const endpoint = await startUpstashStandIn({ redisPort: server.port, token: TOKEN });
    const view = new DirectRedis({ host: '127.0.0.1', port: server.port, lazyConnect: true });
    try {
      const prefix = nextPrefix();
      const settings = { ...FAST, prefix, limit: 2, leaseMs: 600, firstLeaseMs: 600, stallMs: 500, blockMs: 100, pollMaxMs: 100 };
      const sem = new RedisSemaphore({ redis: upstashClient(endpoint.url), ...settings });
      const holders = [await acquireOk(sem, 'holder-1'), await acquireOk(sem, 'holder-2')];
      const waiter = start(sem, 'waiter', { timeoutMs: 60_000 });
      expect(await waiter.queued).toBe(0);
      process.kill(server.pid, 'SIGSTOP');
      // Frozen until both leases have run out by the holders' own clocks (and so by Redis's).
      await vi.waitFor(() => expect(holders.map((h) => h.permit.lapse()?.reason)).toEqual(['unconfirmed', 'unconfirmed']), WAIT);
      process.kill(server.pid, 'SIGCONT');

      // The first script after the thaw saw the silence and gave every lease time to be renewed.
      await vi.waitFor(() => expect(holders.map((h) => h.permit.lapse())).toEqual([undefined, undefined]), WAIT);
      await view.connect();
      expect((await view.zrange(holdersKey(prefix), '0', '-1')).sort()).toEqual(['holder-1', 'holder-2']);
      expect(await view.zscore(`{${prefix}}:queue`, 'waiter')).not.toBeNull();

      await holders[0]!.permit.release();
      const admitted = await waiter.result;
      expect(admitted).toMatchObject({ ok: true, queueDepth: 0 });
      await (admitted as Acquired).permit.release();
      await holders[1]!.permit.release();
      expect(await view.keys(`{${prefix}}*`)).toEqual([]);
    } finally {
      process.kill(server.pid, 'SIGCONT');
      view.disconnect();
      await endpoint.close();
      await server.stop();
    }
  });

  it('workers sharing a namespace with another limit are refused while it is in use; a new limit takes over once idle', async () => {
    const prefix = nextPrefix();
    const ten = withLimit(prefix, 10);
    const holder = await acquireOk(ten, 'holder');
    const twenty = withLimit(prefix, 20);
    expect(await twenty.acquire('other')).toMatchObject({ ok: false, reason: 'misconfigured', limitInUse: 10 });
    expect(await direct.zcard(`{${prefix}}:queue`)).toBe(0); // it took no ticket
    await holder.permit.release();
    const now20 = await acquireOk(twenty, 'other');
    expect(await ten.acquire('again')).toMatchObject({ ok: false, reason: 'misconfigured', limitInUse: 20 });
    await now20.permit.release();
    expect(await keysOf(prefix)).toEqual([]);
  });
});
