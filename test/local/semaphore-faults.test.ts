/**
 * The RedisSemaphore under Redis faults, through the Upstash stand-in: an answered call holds no
 * slot, whether its ACQUIRE arrives after it left, its grant is never taken up, or Redis freezes
 * (SIGSTOP) while calls leave, while holders renew, or for longer than a lease; and workers that
 * share a namespace with another limit.
 */
import { Redis as DirectRedis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { startRedisServer, startUpstashStandIn } from '../../local/upstash-rest.ts';
import { RedisSemaphore, type Acquired, type Semaphore, type SemaphoreRedis } from '../../shared/concurrency/semaphore.ts';
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
