/**
 * What every semaphore keeps, run against the in-process MemorySemaphore and the RedisSemaphore
 * (BLPOP wake-up and polling) through the Upstash stand-in: at most `limit` holders, FIFO queueing,
 * queue timeouts and aborts that give up their place, idempotent release, nothing left in Redis.
 */
import { describe, expect, it, vi } from 'vitest';
import { MemorySemaphore } from '../../shared/concurrency/memory-semaphore.ts';
import { RedisSemaphore, type Acquired, type Refused, type Semaphore } from '../../shared/concurrency/semaphore.ts';
import { acquireOk, direct, FAST, holdersKey, keysOf, nextPrefix, redis, sleep, start, useRedis, WAIT } from './semaphore-fixture.ts';

const redisServer = await useRedis();

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
