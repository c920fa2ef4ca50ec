/**
 * `npm run bench -- deployed-latency`: what each call costs as deployed, where latency is round
 * trips. The gateway runs under `wrangler dev` (local/wrangler-dev.ts) against the Neon and Upstash
 * stand-ins, which hold every answer for an injected round trip (local/round-trip.ts; by default
 * Neon 25 ms, Upstash 8 ms). For every tool (its own example on seeded data), an idempotent write
 * and its replay, MCP `tools/call`, a call with an OAuth access token, code mode's seed story and
 * the first call of a fresh isolate, it prints:
 *
 * - p50 and p95 wall time at the injected round trips;
 * - the round trips on the critical path: the same calls run with only Neon's round trip and with
 *   only Upstash's, interleaved with the rest; (p50 with one − p50 with none) ÷ that round trip is
 *   how many of its round trips the call waited for in series;
 * - the requests the stand-ins received before the answer (what `waitUntil` sends is left out and
 *   named), and what they were for, in order;
 * - the physical minimum (one Redis round trip and the tool's essential queries, each named in
 *   bench/deployed-latency-calls.ts) and a bare peer: a Hono route running the same statements with
 *   `@neondatabase/serverless` (bench/bare-peer/), served by `wrangler dev` too, against the same
 *   stand-ins at the same round trips;
 * - the load average beside every row.
 *
 * Credentials are used as an agent calling every few seconds uses them: each API key (or OAuth
 * token) of a pool is used again only once its cached verification is due for the re-check (1 s);
 * the rows marked "warm" are sent right after another call with the same credential.
 *
 * Fresh isolates run the dry-run bundles under `workerd serve` directly (bench/cold-start.ts), a new
 * process each: the gateway's and the peer's first call, from when workerd listens.
 *
 * Run with `node --import ./local/wasm-imports.ts bench/deployed-latency.ts [--neon-rtt 25]
 * [--upstash-rtt 8] [--samples 12]`; LOCAL_NEON_RTT_MS and LOCAL_UPSTASH_RTT_MS, when set, are the
 * defaults. Traffic stays on 127.0.0.1; bounded by {@link DEPLOYED_LATENCY}.ceilingMs.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { injectedRoundTrips, NO_ROUND_TRIP, ROUND_TRIP_VARIABLES, type RoundTrips } from '../local/round-trip.ts';
import { wranglerEnv } from '../local/wrangler-env.ts';
import { measureBundles } from './bundles.ts';
import { coldStart, writeConfig } from './cold-start.ts';
import { calls, type Call, type CallRequest } from './deployed-latency-calls.ts';
import {
  latencyMarkdown,
  PEER_SETTINGS,
  SETTINGS,
  type PeerSetting,
  type Row,
  type Runs,
  type Sample,
  type Setting,
} from './deployed-latency-report.ts';
import { PEER_CONFIG, PEER_TOKEN, RATE_LIMIT, startStack, type Stack } from './deployed-latency-stack.ts';
import { loadAverage } from './measure.ts';
import { mayBeAwaited, peerSteps, purposesOf, type Served } from './served-requests.ts';

/** The run's shape and bounds. */
export const DEPLOYED_LATENCY = {
  roundTrips: { neon: { rttMs: 25, jitterMs: 0 }, upstash: { rttMs: 8, jitterMs: 0 } } satisfies RoundTrips,
  samples: 12,
  /** API keys (and OAuth tokens) taken in turn, so that each is due for its re-check when used. */
  pool: 16,
  /** A credential is used again only this long after its last use: its cached verification (1 s) is then due. */
  pacedMs: 1_200,
  /** The stand-ins count as quiet (the last call's `waitUntil` work done) after this long without a request. */
  quietMs: 20,
  freshIsolates: 4,
  ceilingMs: 20 * 60_000,
  corpus: { documents: 10, tasks: 200 },
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Runs the bench and answers its markdown section. */
export async function runDeployedLatencyBench(options: { roundTrips?: RoundTrips; samples?: number } = {}): Promise<string> {
  const roundTrips = options.roundTrips ?? defaultRoundTrips();
  const samples = options.samples ?? DEPLOYED_LATENCY.samples;
  const stack = await startStack(DEPLOYED_LATENCY);
  if (!stack) return `${HEADING}\n\n_redis-server is not installed: not measured._\n`;
  const scratch = mkdtempSync(join(tmpdir(), 'edge-tools-latency-'));
  try {
    const list = calls({ base: stack.gateway.url, databaseUrl: stack.databaseUrl, projectId: stack.projectId, setupKey: stack.setupKey });
    const startedAt = performance.now();
    const next = counter();
    // Every call once, untimed and without round trips: modules loaded, scripts in Redis, caches filled.
    for (const call of list) await gatewaySample(stack, call, next(), 'none', roundTrips);
    const rows: Row[] = [];
    for (const call of list) {
      const runs = emptyRuns();
      for (let i = 0; i < samples && performance.now() - startedAt < DEPLOYED_LATENCY.ceilingMs; i++) {
        for (const setting of SETTINGS) {
          const sample = await gatewaySample(stack, call, next(), setting, roundTrips);
          runs.gateway[setting].push(sample);
          if (isPeerSetting(setting))
            runs.peer[setting].push(await peerSample(stack, sample.before, call, roundTripsOf(setting, roundTrips)));
        }
      }
      rows.push({ name: call.name, minimum: call.minimum, runs, peerRuns: call.peerRuns, load: loadAverage() });
      console.log(`  ${call.name}: ${runs.gateway.both.length} samples (load ${loadAverage().toFixed(1)})`);
    }
    const fresh = await freshIsolates(
      stack,
      scratch,
      roundTrips,
      list.find((call) => call.name === 'list-plans')!,
    );
    return latencyMarkdown({
      heading: HEADING,
      rows,
      fresh,
      roundTrips,
      samples,
      pacedMs: DEPLOYED_LATENCY.pacedMs,
      corpus: DEPLOYED_LATENCY.corpus,
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    await stack.stop();
  }
}

const HEADING = '## Latency as deployed: round trips at injected RTTs (bench/deployed-latency.ts)';

/** Neon 25 ms and Upstash 8 ms, or what LOCAL_NEON_RTT_MS / LOCAL_UPSTASH_RTT_MS say when set. */
function defaultRoundTrips(): RoundTrips {
  const fromEnv = injectedRoundTrips();
  const set = (name: keyof RoundTrips) => Boolean(process.env[ROUND_TRIP_VARIABLES[name].rttMs]?.trim());
  return {
    neon: set('neon') ? fromEnv.neon : DEPLOYED_LATENCY.roundTrips.neon,
    upstash: set('upstash') ? fromEnv.upstash : DEPLOYED_LATENCY.roundTrips.upstash,
  };
}

/** The round trips of one setting. */
function roundTripsOf(setting: Setting, { neon, upstash }: RoundTrips): RoundTrips {
  return {
    neon: setting === 'both' || setting === 'database only' ? neon : NO_ROUND_TRIP,
    upstash: setting === 'both' || setting === 'Redis only' ? upstash : NO_ROUND_TRIP,
  };
}

const isPeerSetting = (setting: Setting): setting is PeerSetting => (PEER_SETTINGS as readonly Setting[]).includes(setting);

const counter = () => {
  let n = 0;
  return () => n++;
};

function emptyRuns(): Runs {
  return {
    gateway: Object.fromEntries(SETTINGS.map((setting) => [setting, []])) as unknown as Runs['gateway'],
    peer: Object.fromEntries(PEER_SETTINGS.map((setting) => [setting, []])) as unknown as Runs['peer'],
  };
}

/** One timed call through the gateway at `setting`, its credential taken (and warmed) as the call says. */
async function gatewaySample(stack: Stack, call: Call, index: number, setting: Setting, roundTrips: RoundTrips): Promise<Sample> {
  const prepared = await call.prepare?.(index);
  const pool = call.credential.kind === 'key' ? stack.keys : stack.tokens;
  const bearer = await pool.take();
  if (call.credential.freshness === 'warm') {
    const prime = await fetch(`${stack.gateway.url}/tools/list-plans`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: '{}',
    });
    await prime.text();
  }
  stack.setRoundTrips(roundTripsOf(setting, roundTrips));
  const { body, ...timed } = await timedRequest(stack, stack.gateway.url, call.request(index, bearer, prepared));
  stack.setRoundTrips({ neon: NO_ROUND_TRIP, upstash: NO_ROUND_TRIP });
  return { ...timed, ok: call.succeeded(timed.status, body) };
}

/** The bare peer, at `roundTrips`, running the statements the gateway sent in `before` that the call's peer runs, in the same steps. */
async function peerSample(stack: Stack, before: Served[], call: Call, roundTrips: RoundTrips): Promise<Sample> {
  const statements = before.filter((request) => request.service === 'database' && purposesOf(request).every((p) => call.peerRuns.has(p)));
  stack.setRoundTrips(roundTrips);
  const { body: _body, ...timed } = await timedRequest(stack, stack.peer.url, peerRequest(peerSteps(statements)));
  stack.setRoundTrips({ neon: NO_ROUND_TRIP, upstash: NO_ROUND_TRIP });
  return { ...timed, ok: timed.status === 200 };
}

function peerRequest(steps: ReturnType<typeof peerSteps>): CallRequest {
  return {
    path: '/run',
    init: {
      method: 'POST',
      headers: { authorization: `Bearer ${PEER_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(steps),
    },
  };
}

/** Sends one request once the stand-ins are quiet; answers its wall time and what was sent to them before its answer. */
async function timedRequest(stack: Stack, origin: string, { path, init }: CallRequest) {
  await quiet(stack);
  stack.served.length = 0;
  const sentAt = performance.now();
  const response = await fetch(origin + path, init);
  const body = await response.text();
  const receivedAt = performance.now();
  await quiet(stack);
  const arrived = stack.served.filter((request) => request.arrivedAt >= sentAt && request.arrivedAt <= receivedAt);
  return {
    wallMs: receivedAt - sentAt,
    status: response.status,
    body,
    sentAt,
    before: arrived.filter(mayBeAwaited),
    notAwaited: arrived.filter((request) => !mayBeAwaited(request)),
  };
}

/** Waits until neither stand-in holds a request and none has answered for {@link DEPLOYED_LATENCY}.quietMs (at most 10 s). */
async function quiet(stack: Stack): Promise<void> {
  const giveUpAt = performance.now() + 10_000;
  while (performance.now() < giveUpAt) {
    if (stack.inFlight() === 0 && performance.now() - stack.lastAnswerAt >= DEPLOYED_LATENCY.quietMs) return;
    await sleep(5);
  }
}

/**
 * The first call of a fresh isolate, gateway and peer, at each setting: each sample a new `workerd
 * serve` of the dry-run bundle (no wrangler in front), timed from when it listens to the answer.
 */
async function freshIsolates(stack: Stack, scratch: string, roundTrips: RoundTrips, listPlans: Call) {
  const [gatewayBundle] = await measureBundles(undefined, ['gateway']);
  const peerOut = join(scratch, 'peer-bundle');
  const built = spawnSync(
    join(fileURLToPath(new URL('..', import.meta.url)), 'node_modules/.bin/wrangler'),
    ['deploy', '--dry-run', '--outdir', peerOut, '--config', PEER_CONFIG],
    { env: wranglerEnv(fileURLToPath(new URL('..', import.meta.url)), { offline: true }), encoding: 'utf8' },
  );
  if (built.status !== 0) throw new Error(`The bare peer did not bundle:\n${built.stdout}\n${built.stderr}`);
  const gatewayConfig = writeConfig(scratch, 'fresh-gateway', gatewayBundle!.script, {
    DATABASE_URL: stack.databaseUrl,
    UPSTASH_REDIS_REST_URL: stack.upstash.url,
    UPSTASH_REDIS_REST_TOKEN: stack.upstash.token,
    RATE_LIMIT_PER_MINUTE: RATE_LIMIT,
  });
  const peerConfig = writeConfig(scratch, 'fresh-peer', join(peerOut, 'worker.js'), { DATABASE_URL: stack.databaseUrl, PEER_TOKEN });
  // The statements the peer runs: list-plans' own, as the gateway sent them.
  const reference = await gatewaySample(stack, listPlans, -1, 'none', roundTrips);
  const statements = peerRequest(peerSteps(reference.before.filter((request) => purposesOf(request).every((p) => p === 'tool'))));
  const fresh: Runs = emptyRuns();
  for (let i = 0; i < DEPLOYED_LATENCY.freshIsolates; i++) {
    for (const setting of SETTINGS) {
      const key = await stack.keys.take();
      fresh.gateway[setting].push(
        await firstCall(stack, gatewayConfig, roundTripsOf(setting, roundTrips), listPlans.request(0, key, undefined), listPlans.succeeded),
      );
      if (isPeerSetting(setting))
        fresh.peer[setting].push(
          await firstCall(stack, peerConfig, roundTripsOf(setting, roundTrips), statements, (status) => status === 200),
        );
    }
  }
  return { runs: fresh, load: loadAverage() };
}

/** Spawns workerd on `config`, sends `request` once it listens, and answers the call as a sample. */
async function firstCall(
  stack: Stack,
  config: string,
  roundTrips: RoundTrips,
  { path, init }: CallRequest,
  succeeded: (status: number, body: string) => boolean,
): Promise<Sample> {
  await quiet(stack);
  stack.served.length = 0;
  stack.setRoundTrips(roundTrips);
  let answer = { status: 0, body: '', sentAt: 0, receivedAt: 0 };
  await coldStart(config, async (origin, signal) => {
    const sentAt = performance.now();
    const response = await fetch(origin + path, { ...init, signal });
    const body = await response.text();
    answer = { status: response.status, body, sentAt, receivedAt: performance.now() };
    return new Response(body, { status: response.status });
  });
  await quiet(stack);
  stack.setRoundTrips({ neon: NO_ROUND_TRIP, upstash: NO_ROUND_TRIP });
  const arrived = stack.served.filter((request) => request.arrivedAt >= answer.sentAt && request.arrivedAt <= answer.receivedAt);
  return {
    wallMs: answer.receivedAt - answer.sentAt,
    status: answer.status,
    sentAt: answer.sentAt,
    before: arrived.filter(mayBeAwaited),
    notAwaited: arrived.filter((request) => !mayBeAwaited(request)),
    ok: succeeded(answer.status, answer.body),
  };
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { 'neon-rtt': { type: 'string' }, 'upstash-rtt': { type: 'string' }, samples: { type: 'string' } },
  });
  const defaults = defaultRoundTrips();
  const rtt = (value: string | undefined, fallback: RoundTrips['neon']) =>
    value === undefined ? fallback : { rttMs: Number(value), jitterMs: 0 };
  console.log(
    await runDeployedLatencyBench({
      roundTrips: { neon: rtt(values['neon-rtt'], defaults.neon), upstash: rtt(values['upstash-rtt'], defaults.upstash) },
      samples: values.samples === undefined ? undefined : Number(values.samples),
    }),
  );
}
