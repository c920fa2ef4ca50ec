/**
 * Faults, measured on the real worker: `wrangler dev` (workerd, with its real request lifecycle: work
 * not handed to waitUntil dies with the request) in front of the Neon stand-in and redis-server
 * behind the Upstash stand-in, called over HTTP.
 *
 * - Recovery after a Redis freeze: redis-server is stopped (SIGSTOP) for 10 s while calls keep
 *   coming (4 per second, each answered BUSY when its slot request times out); then, in the 5 s
 *   after it resumes, a call is sent every 100 ms. Reported: their wait for a slot (`meta.queued_ms`)
 *   and their whole latency, median and p95, and the holders Redis counts after the thaw. Target:
 *   median wait <= 1 s.
 * - Revocation: a key in steady use (a call every 50 ms) is revoked straight in SQL
 *   (`update api_keys set revoked_at = now()`); reported: seconds from the UPDATE's answer to the
 *   first refusal, over several keys. Target <= 2 s.
 *
 * Run with `node bench/faults.ts [--root <checkout>]`: `--root` serves another checkout's worker
 * (e.g. an older commit, extracted with `git archive`) against the same stand-ins, for a before/after.
 * `runFaultsBench()` returns the markdown section for RESULTS.md.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Redis as DirectRedis } from 'ioredis';
import { createProject, migrateDatabase } from '../local/database.ts';
import { startNeonStandIn } from '../local/neon-http.ts';
import { startRedisServer, startUpstashStandIn } from '../local/upstash-rest.ts';
import { startWranglerDev } from '../local/wrangler-dev.ts';
import { issueApiKey } from '../shared/auth/keys.ts';
import { injectRoundTrips } from './measure.ts';
import { createDb } from '../shared/runtime/db.ts';
import { sql } from 'drizzle-orm';

const BENCH = {
  freezeMs: 10_000,
  /** Calls per second while Redis is frozen. */
  duringFreezePerSecond: 4,
  afterThawMs: 5_000,
  afterThawEveryMs: 100,
  revocations: 5,
  revocationEveryMs: 50,
};

const ROOT = fileURLToPath(new URL('..', import.meta.url));

type Stack = {
  baseUrl: string;
  apiKey: string;
  projectId: string;
  databaseUrl: string;
  redisPid: number;
  redisPort: number;
  stop(): Promise<void>;
};

/** Runs both measurements and returns the markdown section. */
export async function runFaultsBench(options: { root?: string } = {}): Promise<string> {
  const stack = await startStack(options.root ?? ROOT);
  if (!stack) return '## Faults (bench/faults.ts)\n\n_redis-server is not installed: not measured._\n';
  try {
    const recovery = await freezeRecovery(stack);
    const revocation = await revocationDelay(stack);
    return [
      '## Faults on the real worker (bench/faults.ts)',
      '',
      `\`wrangler dev\` (workerd) over HTTP, Neon stand-in, redis-server behind the Upstash stand-in, all on loopback; log-mood calls (one insert). Node ${process.versions.node}.`,
      '',
      `### Recovery after a ${BENCH.freezeMs / 1000} s Redis freeze`,
      '',
      `During the freeze: ${recovery.during.length} calls (${BENCH.duringFreezePerSecond}/s): ${summarizeStatuses(recovery.during)}. ` +
        `After it: a call every ${BENCH.afterThawEveryMs} ms for ${BENCH.afterThawMs / 1000} s (${recovery.after.length} calls): ${summarizeStatuses(recovery.after)}.`,
      '',
      '| calls sent in the 5 s after the thaw | median | p95 | max |',
      '|---|---:|---:|---:|',
      `| wait for a slot (meta.queued_ms) | ${ms(
        percentile(
          recovery.after.map((c) => c.queuedMs),
          0.5,
        ),
      )} | ${ms(
        percentile(
          recovery.after.map((c) => c.queuedMs),
          0.95,
        ),
      )} | ${ms(Math.max(...recovery.after.map((c) => c.queuedMs)))} |`,
      `| whole call (client side) | ${ms(
        percentile(
          recovery.after.map((c) => c.latencyMs),
          0.5,
        ),
      )} | ${ms(
        percentile(
          recovery.after.map((c) => c.latencyMs),
          0.95,
        ),
      )} | ${ms(Math.max(...recovery.after.map((c) => c.latencyMs)))} |`,
      '',
      `Holders counted in Redis after the thaw: ${recovery.holders.map(([at, n]) => `${n} at +${(at / 1000).toFixed(1)} s`).join(', ')}. Target: median wait <= 1 s.`,
      '',
      '### Revocation of a key in use (UPDATE api_keys SET revoked_at = now())',
      '',
      `${revocation.length} keys, each called every ${BENCH.revocationEveryMs} ms; time from the UPDATE's answer to the first refused call: ` +
        `median ${seconds(percentile(revocation, 0.5))}, max ${seconds(Math.max(...revocation))} (${revocation.map(seconds).join(', ')}). Target <= 2 s.`,
      '',
    ].join('\n');
  } finally {
    await stack.stop();
  }
}

type Sample = { status: number; code?: string; queuedMs: number; latencyMs: number };

async function freezeRecovery(stack: Stack): Promise<{ during: Sample[]; after: Sample[]; holders: [number, number][] }> {
  for (let i = 0; i < 20; i++) await callLogMood(stack); // warm: key cache, scripts, connections
  const during: Promise<Sample>[] = [];
  process.kill(stack.redisPid, 'SIGSTOP');
  const frozenAt = performance.now();
  try {
    while (performance.now() - frozenAt < BENCH.freezeMs) {
      during.push(callLogMood(stack));
      await sleep(1000 / BENCH.duringFreezePerSecond);
    }
  } finally {
    process.kill(stack.redisPid, 'SIGCONT');
  }
  const thawedAt = performance.now();
  const direct = new DirectRedis({ host: '127.0.0.1', port: stack.redisPort });
  const holders: [number, number][] = [];
  const sampling = (async () => {
    for (const at of [100, 500, 1_000, 2_000, 3_000, 5_000]) {
      await sleep(at - (performance.now() - thawedAt));
      holders.push([at, await direct.zcard('{edge-tools:semaphore}:holders')]);
    }
  })();
  const after: Promise<Sample>[] = [];
  while (performance.now() - thawedAt < BENCH.afterThawMs) {
    after.push(callLogMood(stack));
    await sleep(BENCH.afterThawEveryMs);
  }
  const result = { during: await Promise.all(during), after: await Promise.all(after), holders };
  await sampling;
  direct.disconnect();
  return result;
}

async function revocationDelay(stack: Stack): Promise<number[]> {
  const db = createDb(stack.databaseUrl);
  const delays: number[] = [];
  for (let i = 0; i < BENCH.revocations; i++) {
    const { key, id } = await issueApiKey(db, { projectId: stack.projectId, name: 'bench' });
    // Read by the calls in flight before it is set: a `let`, assigned once, after they start.
    // eslint-disable-next-line prefer-const
    let revokedAt: number | undefined;
    let refusedAt: number | undefined;
    const using = (async () => {
      while (refusedAt === undefined) {
        const sentAt = performance.now();
        const sample = await callLogMood(stack, key);
        if (sample.status === 401 && revokedAt !== undefined && sentAt >= revokedAt) refusedAt = performance.now();
        else if (sample.status === 401) throw new Error('the key was refused before it was revoked');
        await sleep(BENCH.revocationEveryMs);
      }
    })();
    await sleep(1_500 + Math.random() * 500);
    await db.execute(sql`update api_keys set revoked_at = now() where id = ${id}`);
    revokedAt = performance.now();
    await using;
    delays.push(refusedAt! - revokedAt);
  }
  return delays;
}

async function callLogMood(stack: Stack, key = stack.apiKey): Promise<Sample> {
  const startedAt = performance.now();
  const response = await fetch(`${stack.baseUrl}/tools/log-mood`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      user_id: `bench_${crypto.randomUUID().slice(0, 12)}`,
      mood: 'happy',
      energy_level: 5,
      timestamp: '2030-06-01T12:00:00Z',
    }),
  });
  const body = (await response.json()) as { error?: { code: string }; meta?: { queued_ms: number } };
  return { status: response.status, code: body.error?.code, queuedMs: body.meta?.queued_ms ?? 0, latencyMs: performance.now() - startedAt };
}

/** The Neon stand-in (in memory), redis-server behind the Upstash stand-in, and `wrangler dev` from `root`. */
async function startStack(root: string): Promise<Stack | null> {
  const redis = await startRedisServer();
  if (!redis) return null;
  const upstash = await startUpstashStandIn({ redisPort: redis.port, token: 'bench' });
  const neon = await startNeonStandIn();
  await migrateDatabase(neon.connectionString);
  const { projectId, apiKey } = await createProject(neon.connectionString, 'Faults bench');
  injectRoundTrips({ neon, upstash });
  const worker = await startWranglerDev({
    root,
    vars: { DATABASE_URL: neon.connectionString, UPSTASH_REDIS_REST_URL: upstash.url, UPSTASH_REDIS_REST_TOKEN: upstash.token },
  });
  return {
    baseUrl: worker.url,
    apiKey,
    projectId,
    databaseUrl: neon.connectionString,
    redisPid: redis.pid,
    redisPort: redis.port,
    stop: async () => {
      worker.stop();
      await upstash.close();
      await redis.stop();
      await neon.close();
    },
  };
}

function summarizeStatuses(samples: Sample[]): string {
  const counts = new Map<string, number>();
  for (const s of samples) counts.set(s.code ?? String(s.status), (counts.get(s.code ?? String(s.status)) ?? 0) + 1);
  return [...counts].map(([what, n]) => `${n} × ${what === '200' ? 'success' : what}`).join(', ');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil(p * values.length) - 1)]!;
const ms = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${Math.round(x)} ms`);
const seconds = (x: number) => `${(x / 1000).toFixed(2)} s`;

if (import.meta.main) {
  const { values } = parseArgs({ options: { root: { type: 'string' } } });
  console.log(await runFaultsBench({ root: values.root }));
}
