/**
 * `npm run bench -- code-mode-attacks`: what an attack on code mode costs another tenant. Against
 * `wrangler dev` (the gateway, with code mode's sandbox host beside it) over the Neon stand-in and,
 * when installed, redis-server behind the Upstash stand-in, a victim (another project's key) calls
 * list-plans directly and asks `/health`, one request of each kind at a time, back to back, and
 * every answer's latency is kept: over a quiet window first, then while each attack of
 * test/support/code-mode-attacks.ts runs (from its request until its answer). Printed per attack:
 * how it ended and how long it took, the victim's requests, how many were lost (a request that
 * failed or was not answered 200), and its p50, p99 and max latency beside the quiet window's, with
 * the load average. Target: the victim's p99 grows by at most 1 s. Measured, never asserted.
 *
 * `node bench/code-mode-attacks.ts --url <base> --attacker <key> --victim <key>` measures a running
 * stack instead (e.g. `npm run dev`; the keys of two projects, each from `npm run keys -- create --project <name> --new-project`).
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { createProject, migrateDatabase } from '../local/database.ts';
import { startNeonStandIn } from '../local/neon-http.ts';
import { startRedisServer, startUpstashStandIn } from '../local/upstash-rest.ts';
import { startWranglerDev } from '../local/wrangler-dev.ts';
import { CODE_MODE_ATTACKS } from '../test/support/code-mode-attacks.ts';
import { ms, percentile } from './measure.ts';

/** How long the quiet window lasts. */
const QUIET_MS = 10_000;
/** A victim request not answered within this is counted lost (a ceiling, far above any answer). */
const REQUEST_CEILING_MS = 60_000;

/** A stack to measure: its URL and two keys of two projects. */
interface Target {
  base: string;
  attackerKey: string;
  victimKey: string;
  stop(): Promise<void>;
}

/** What the victim saw over one window. */
interface Window {
  latencies: number[];
  lost: string[];
}

/** Runs every attack against a fresh stack (or `target`) and returns the markdown section. */
export async function runCodeModeAttacksBench(target?: Target): Promise<string> {
  const stack = target ?? (await startStack());
  try {
    await warmUp(stack);
    const quiet = await victimDuring(stack, () => new Promise((resolve) => setTimeout(resolve, QUIET_MS)));
    const rows: string[] = [];
    for (const attack of CODE_MODE_ATTACKS) {
      const loadBefore = loadavg()[0]!;
      let ended = '';
      let tookMs = 0;
      const window = await victimDuring(stack, async () => {
        const started = performance.now();
        const answer = await runCode(stack, attack.code);
        tookMs = performance.now() - started;
        ended = answer.success
          ? 'answered'
          : `${answer.error.code} ${answer.error.details?.limit ?? answer.error.details?.reason ?? ''}`.trim();
      });
      rows.push(
        `| ${attack.name} | ${ended} | ${ms(tookMs)} | ${window.latencies.length + window.lost.length} | ${window.lost.length} | ` +
          `${ms(percentile(window.latencies, 0.5))} | ${ms(percentile(window.latencies, 0.99))} | ${ms(Math.max(...window.latencies))} | ` +
          `${loadBefore.toFixed(1)} → ${loadavg()[0]!.toFixed(1)} |`,
      );
      console.log(rows[rows.length - 1]);
    }
    return [
      '## What a code-mode attack costs another tenant (bench/code-mode-attacks.ts)',
      '',
      `\`wrangler dev\` with code mode's sandbox host (local/sandbox-host.ts: each execution in a workerd process of its own), over HTTP on loopback. ` +
        'The victim, another project, calls list-plans directly and asks /health, one request of each at a time, back to back, while each attack runs ' +
        '(from its request to its answer). Lost: a victim request that failed or was not answered 200. Target: the p99 grows by at most 1 s.',
      '',
      `Quiet window (${QUIET_MS / 1000} s, no attack): ${quiet.latencies.length} requests, ${quiet.lost.length} lost; ` +
        `p50 ${ms(percentile(quiet.latencies, 0.5))}, p99 ${ms(percentile(quiet.latencies, 0.99))}, max ${ms(Math.max(...quiet.latencies))}.`,
      '',
      '| attack | ended | took | victim requests | lost | victim p50 | victim p99 | victim max | load average |',
      '|---|---|---:|---:|---:|---:|---:|---:|---|',
      ...rows,
      '',
    ].join('\n');
  } finally {
    if (!target) await stack.stop();
  }
}

/** The Neon stand-in, redis-server behind the Upstash stand-in when installed, `wrangler dev` with its sandbox host; two projects. */
async function startStack(): Promise<Target> {
  const neon = await startNeonStandIn();
  await migrateDatabase(neon.connectionString);
  const attacker = await createProject(neon.connectionString, 'Attacker');
  const victim = await createProject(neon.connectionString, 'Victim');
  const redis = await startRedisServer();
  const upstash = redis ? await startUpstashStandIn({ redisPort: redis.port, token: 'bench' }) : undefined;
  const worker = await startWranglerDev({
    vars: {
      DATABASE_URL: neon.connectionString,
      // The victim's steady stream stays far below it: what is measured is the attack's cost, not the rate limit.
      RATE_LIMIT_PER_MINUTE: '100000',
      ...(upstash && { UPSTASH_REDIS_REST_URL: upstash.url, UPSTASH_REDIS_REST_TOKEN: upstash.token }),
    },
  });
  return {
    base: worker.url,
    attackerKey: attacker.apiKey,
    victimKey: victim.apiKey,
    stop: async () => {
      worker.stop();
      await upstash?.close();
      await redis?.stop();
      await neon.close();
    },
  };
}

/** A few requests of each kind, so that first-use costs fall outside the windows. */
async function warmUp(target: Target): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await victimRequest(target, 'call');
    await victimRequest(target, 'health');
    await runCode(target, 'async () => (await tools.listPlans({ limit: 1 })).success');
  }
}

/** Keeps the victim's two streams going until `during` settles; answers their latencies and what was lost. */
async function victimDuring(target: Target, during: () => Promise<unknown>): Promise<Window> {
  const window: Window = { latencies: [], lost: [] };
  let running = true;
  const stream = async (kind: 'call' | 'health') => {
    while (running) {
      const started = performance.now();
      const problem = await victimRequest(target, kind);
      if (problem) window.lost.push(problem);
      else window.latencies.push(performance.now() - started);
    }
  };
  const streams = Promise.all([stream('call'), stream('health')]);
  try {
    await during();
  } finally {
    running = false;
    await streams;
  }
  return window;
}

/** One victim request: undefined when answered 200 (and, for a call, successfully), else what went wrong. */
async function victimRequest(target: Target, kind: 'call' | 'health'): Promise<string | undefined> {
  try {
    const response =
      kind === 'health'
        ? await fetch(`${target.base}/health`, { signal: AbortSignal.timeout(REQUEST_CEILING_MS) })
        : await fetch(`${target.base}/tools/list-plans`, {
            method: 'POST',
            headers: { authorization: `Bearer ${target.victimKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({ limit: 1 }),
            signal: AbortSignal.timeout(REQUEST_CEILING_MS),
          });
    const body = (await response.json()) as { success: boolean };
    return response.status === 200 && body.success ? undefined : `${kind} answered ${response.status}`;
  } catch (error) {
    return `${kind} lost: ${(error as Error).message}`;
  }
}

type Envelope = { success: true } | { success: false; error: { code: string; details?: { limit?: string; reason?: string } } };

/** Runs code as the attacker: `POST /code`. */
async function runCode(target: Target, code: string): Promise<Envelope> {
  const response = await fetch(`${target.base}/code`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.attackerKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  return (await response.json()) as Envelope;
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { url: { type: 'string' }, attacker: { type: 'string' }, victim: { type: 'string' } } });
  const target =
    values.url && values.attacker && values.victim
      ? { base: values.url, attackerKey: values.attacker, victimKey: values.victim, stop: async () => {} }
      : undefined;
  console.log(await runCodeModeAttacksBench(target));
  process.exit(0);
}
