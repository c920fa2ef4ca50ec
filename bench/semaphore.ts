/**
 * Semaphore benchmark: RedisSemaphore (through @upstash/redis -> the local Upstash stand-in -> a real
 * redis-server) next to MemorySemaphore. Run with `node bench/semaphore.ts`; `runSemaphoreBench()`
 * returns the same report as a markdown section for bench/RESULTS.md.
 */
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { Redis } from '@upstash/redis';
import { startRedisServer, startUpstashStandIn } from '../local/upstash-rest.ts';
import { injectRoundTrips } from './measure.ts';
import { MemorySemaphore } from '../shared/concurrency/memory-semaphore.ts';
import { RedisSemaphore, SEMAPHORE_REDIS_RETRY, type Semaphore } from '../shared/concurrency/semaphore.ts';

const BENCH = {
  callers: 100,
  limit: 10,
  holdMinMs: 50,
  holdMaxMs: 200,
  /** Saturation runs per semaphore (the same hold times for every semaphore). */
  runs: 3,
  /** Sequential acquire+release pairs for the uncontended rate. */
  uncontendedOps: 500,
  /** The whole bench gives up after this. */
  budgetMs: 120_000,
};

type Saturation = {
  utilisation: number;
  meanWaitMs: number;
  p95WaitMs: number;
  idealMeanMs: number;
  idealP95Ms: number;
  meanRequests: number;
  maxRequests: number;
  maxHolders: number;
  refused: number;
};

/** Runs the benchmark and returns its report as a markdown section. */
export async function runSemaphoreBench(): Promise<string> {
  const redisServer = await startRedisServer();
  const lines = [
    '## Semaphore (bench/semaphore.ts)',
    '',
    `${BENCH.callers} callers at once, ${BENCH.limit} permits, holds uniform ${BENCH.holdMinMs}–${BENCH.holdMaxMs} ms; ` +
      `${availableParallelism()} cores, Node ${process.versions.node}, ${redisVersion()}. ` +
      'Redis path: @upstash/redis -> local Upstash REST stand-in -> redis-server, on loopback.',
    '',
    '- utilisation: busy slot-time / (permits × time) while callers were queued (from the burst to the last grant).',
    "- ideal wait (Little's law): the caller with arrival rank i waits max(0, i − permits + 1) × mean hold / permits " +
      '(a fluid bound: even a zero-overhead semaphore sits about 10 % above it, as MemorySemaphore shows).',
    '- each semaphore first does one unreported warm-up run (script loading, connections, JIT).',
    '- round trips: Redis requests per acquire (a woken waiter counts its claim, sent off the critical path).',
    '',
  ];
  const deadline = Date.now() + BENCH.budgetMs;
  const standIn = redisServer ? await startUpstashStandIn({ redisPort: redisServer.port, token: 'bench' }) : null;
  if (standIn) injectRoundTrips({ upstash: standIn });
  try {
    const redis = standIn
      ? new Redis({ url: standIn.url, token: standIn.token, retry: SEMAPHORE_REDIS_RETRY, enableTelemetry: false })
      : null;
    const subjects: [string, (run: number) => Semaphore][] = [['MemorySemaphore', () => new MemorySemaphore({ limit: BENCH.limit })]];
    if (redis) {
      subjects.unshift(
        ['RedisSemaphore (BLPOP wake-up)', (run) => new RedisSemaphore({ redis, limit: BENCH.limit, prefix: `bench:b${run}` })],
        [
          'RedisSemaphore (polling only)',
          (run) => new RedisSemaphore({ redis, limit: BENCH.limit, prefix: `bench:p${run}`, wake: 'poll' }),
        ],
      );
    } else {
      lines.push('> redis-server is not installed: RedisSemaphore was not measured.', '');
    }

    lines.push(
      '| semaphore | run | utilisation | mean wait | ideal mean | ratio | p95 wait | ideal p95 | ratio | round trips mean / max | max holders | refused |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const [name, make] of subjects) {
      await saturate(make(0), holdTimes(0)); // warm-up, not reported: script loading, connections, JIT
      for (let run = 1; run <= BENCH.runs && Date.now() < deadline; run++) {
        const s = await saturate(make(run), holdTimes(run));
        lines.push(
          `| ${name} | ${run} | ${pct(s.utilisation)} | ${ms(s.meanWaitMs)} | ${ms(s.idealMeanMs)} | ${ratio(s.meanWaitMs, s.idealMeanMs)} ` +
            `| ${ms(s.p95WaitMs)} | ${ms(s.idealP95Ms)} | ${ratio(s.p95WaitMs, s.idealP95Ms)} ` +
            `| ${s.meanRequests.toFixed(1)} / ${s.maxRequests} | ${s.maxHolders} | ${s.refused} |`,
        );
      }
    }

    lines.push('', '| semaphore | uncontended acquire+release / s | acquire mean | round trips per acquire |', '|---|---|---|---|');
    for (const [name, make] of subjects) {
      if (Date.now() >= deadline) break;
      const u = await uncontended(make(BENCH.runs + 1));
      lines.push(`| ${name} | ${Math.round(u.opsPerSecond)} | ${u.acquireMeanMs.toFixed(3)} ms | ${u.requests} |`);
    }
    if (Date.now() >= deadline) lines.push('', `> Stopped early: the bench budget of ${BENCH.budgetMs / 1000} s ran out.`);
  } finally {
    await standIn?.close();
    await redisServer?.stop();
  }
  return lines.join('\n') + '\n';
}

/** All callers at once; each holds its slot for its hold time. */
async function saturate(semaphore: Semaphore, holds: number[]): Promise<Saturation> {
  let holders = 0;
  let maxHolders = 0;
  const t0 = performance.now();
  const outcomes = await Promise.all(
    holds.map(async (holdMs, i) => {
      const result = await semaphore.acquire(`caller-${i}`);
      // Every caller is meant to be granted in turn: a refusal means the bench measured something else.
      if (!result.ok)
        throw new Error(
          `caller-${i} was refused (${result.reason}: ${result.detail}); every caller of a saturation run must be granted, so its figures would not mean what they say.`,
        );
      const grantedAt = performance.now() - t0;
      maxHolders = Math.max(maxHolders, ++holders);
      await sleep(holdMs);
      holders--;
      // The slot was busy for as long as the call actually held it (timers overshoot).
      const heldMs = performance.now() - t0 - grantedAt;
      await result.permit.release();
      return { grantedAt, heldMs, waitMs: result.queuedMs, requests: result.requests };
    }),
  );
  const done = outcomes;
  const lastGrant = Math.max(...done.map((o) => o.grantedAt));
  const busy = done.reduce((sum, o) => sum + Math.max(0, Math.min(o.grantedAt + o.heldMs, lastGrant) - o.grantedAt), 0);
  const meanHold = mean(done.map((o) => o.heldMs));
  const ideal = holds.map((_, rank) => (Math.max(0, rank - BENCH.limit + 1) * meanHold) / BENCH.limit);
  const waits = done.map((o) => o.waitMs);
  const requests = done.map((o) => o.requests);
  return {
    utilisation: busy / (BENCH.limit * lastGrant),
    meanWaitMs: mean(waits),
    p95WaitMs: percentile(waits, 0.95),
    idealMeanMs: mean(ideal),
    idealP95Ms: percentile(ideal, 0.95),
    meanRequests: mean(requests),
    maxRequests: Math.max(...requests),
    maxHolders,
    refused: holds.length - done.length,
  };
}

/** Sequential acquire + release, nobody else around. */
async function uncontended(semaphore: Semaphore): Promise<{ opsPerSecond: number; acquireMeanMs: number; requests: number }> {
  let acquireMs = 0;
  let requests = 0;
  const t0 = performance.now();
  for (let i = 0; i < BENCH.uncontendedOps; i++) {
    const start = performance.now();
    const result = await semaphore.acquire(`solo-${i}`);
    acquireMs += performance.now() - start;
    if (!result.ok) throw new Error(`uncontended acquire refused: ${result.detail}`);
    requests = Math.max(requests, result.requests);
    await result.permit.release();
  }
  const elapsed = performance.now() - t0;
  return { opsPerSecond: (BENCH.uncontendedOps * 1000) / elapsed, acquireMeanMs: acquireMs / BENCH.uncontendedOps, requests };
}

/** Hold times for one run, the same for every semaphore (a small seeded PRNG, mulberry32). */
function holdTimes(seed: number): number[] {
  let state = seed * 0x9e3779b9;
  const random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return Array.from({ length: BENCH.callers }, () => BENCH.holdMinMs + random() * (BENCH.holdMaxMs - BENCH.holdMinMs));
}

function redisVersion(): string {
  try {
    return execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).split(' ').slice(0, 3).join(' ');
  } catch {
    return 'no redis-server';
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.ceil(p * values.length) - 1]!;
const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
const ms = (x: number) => `${Math.round(x)} ms`;
const ratio = (measured: number, ideal: number) => `${(measured / ideal).toFixed(2)}×`;

if (import.meta.main) {
  console.log(await runSemaphoreBench());
}
