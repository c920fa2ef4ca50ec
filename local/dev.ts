/**
 * `npm run dev`: the whole stack on this machine, offline.
 * 1. the Neon stand-in (PGlite + pgvector behind Neon's HTTP protocol), data in .local-data/
 *    (wrangler's local state too: the OAuth KV namespace, in .local-data/wrangler);
 * 2. redis-server behind the Upstash REST stand-in, when redis-server is installed (otherwise the
 *    worker falls back to its in-process semaphore, and says so);
 * 3. the migrations, and a demo project with its API key (DEV_API_KEY when set), seeded on first
 *    start, all or nothing, with sample project plans and the study planner's demo data
 *    (local/demo-data.ts);
 * 4. code mode's sandbox host (local/sandbox-host.ts): agents' code runs in workerd processes of
 *    its own, never in the gateway's;
 * 5. `wrangler dev` serving the gateway on http://127.0.0.1:PORT (8787 by default), with the observability variables
 *    of this shell passed on (OTEL_*, TRACE_RETENTION_DAYS, METRICS_TOKEN), spans carrying the tools'
 *    arguments and results unless the shell says otherwise, the sandbox host's URL (SANDBOX_URL),
 *    and the gateway's Cron Trigger callable at /__scheduled (retention).
 * Every port it opens is on 127.0.0.1, named when the stack is up, and chosen by a variable (0: any
 * free port): PORT (the gateway), INSPECTOR_PORT (workerd's DevTools inspector), NEON_PORT,
 * UPSTASH_PORT, REDIS_PORT, SANDBOX_PORT; REDIS=off runs without redis-server.
 * docs/local-development.md lists them.
 * With LOCAL_NEON_RTT_MS / LOCAL_UPSTASH_RTT_MS set (local/round-trip.ts), every request the worker
 * sends to the stand-ins costs that round trip, as deployed; the first start's seeding does not.
 * Ctrl-C stops everything it started.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_KEY_FORMAT } from '../shared/auth/keys.ts';
import { LOCAL_DATA, openDemoData } from './demo-data.ts';
import { describeRoundTrips, injectedRoundTrips } from './round-trip.ts';
import { startSandboxHost } from './sandbox-host.ts';
import { startRedisServer, startUpstashStandIn } from './upstash-rest.ts';
import { freePort } from './wrangler-dev.ts';
import { wranglerEnv } from './wrangler-env.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The port variable `name` of this shell (0 for any free port), or `fallback` when unset; exits naming a bad value. */
function portFrom(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const port = Number(value);
  if (Number.isInteger(port) && port >= 0 && port <= 65_535) return port;
  console.error(`${name} must be a port number from 0 to 65535 (0 for any free port), but is '${value}'.`);
  process.exit(2);
}

/** Whether `port` of 127.0.0.1 can be listened on now. */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** The first free port from `from` up. */
async function firstFree(from: number): Promise<number> {
  let port = from;
  while (!(await isFree(port))) port++;
  return port;
}

// Ports given as 0 are chosen here, and the inspector's as wrangler would (9229 or the first free
// one above it), so that the announcement names the ports in use.
const PORT = portFrom('PORT', 8787) || (await freePort());
const INSPECTOR_PORT = process.env.INSPECTOR_PORT ? portFrom('INSPECTOR_PORT', 0) || (await freePort()) : await firstFree(9229);
const REDIS_OFF = process.env.REDIS === 'off';

if (process.env.DEV_API_KEY && !API_KEY_FORMAT.test(process.env.DEV_API_KEY)) {
  console.error(
    "DEV_API_KEY must have the form of an API key: 'et_' followed by 8 to 128 letters, digits, '-' or '_' (the worker refuses any other).",
  );
  process.exit(2);
}
// Read before anything starts: a wrong value stops here, naming the variable.
const roundTrips = injectedRoundTrips();
// Until the stack runs, Ctrl-C just ends the process: an unfinished first start is begun again next time.
const { neon, demo } = await openDemoData({
  apiKey: process.env.DEV_API_KEY,
  gatewayUrl: `http://127.0.0.1:${PORT}`,
  databasePort: portFrom('NEON_PORT', 0),
});
const databaseUrl = neon.connectionString;
// Seeded at the stand-in's own speed; the worker's requests pay the round trip asked for.
neon.roundTrip.set(roundTrips.neon);

const redis = REDIS_OFF ? null : await startRedisServer({ port: portFrom('REDIS_PORT', 0) || undefined });
const upstash = redis
  ? await startUpstashStandIn({
      redisPort: redis.port,
      token: crypto.randomUUID(),
      port: portFrom('UPSTASH_PORT', 0),
      roundTrip: roundTrips.upstash,
    })
  : undefined;
const redisVars = upstash ? ['--var', `UPSTASH_REDIS_REST_URL:${upstash.url}`, '--var', `UPSTASH_REDIS_REST_TOKEN:${upstash.token}`] : [];
/** Variables of this shell the worker should see too: the OpenTelemetry export and retention. */
const PASSED_ON =
  /^(OTEL_EXPORTER_OTLP_(TRACES_)?(ENDPOINT|PROTOCOL)|OTEL_EXPORTER_OTLP_HEADERS|OTEL_EXPORTER_OTLP_TIMEOUT|OTEL_SERVICE_NAME|OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT|TRACE_RETENTION_DAYS|METRICS_TOKEN)$/;
// On a developer's machine spans show what each tool was given and answered; deployments opt in.
const passedVars = Object.entries({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true', ...process.env }).flatMap(
  ([name, value]) => (PASSED_ON.test(name) && value ? ['--var', `${name}:${value}`] : []),
);
console.log(`Injected round trips (LOCAL_NEON_RTT_MS, LOCAL_UPSTASH_RTT_MS): ${describeRoundTrips(roundTrips)}.`);
const sandbox = await startSandboxHost({ port: portFrom('SANDBOX_PORT', 0) });
console.log(`Code mode's sandbox host: ${sandbox.url} (each execution in a workerd process of its own; GET /health lists them)`);
console.log(
  upstash
    ? `Global semaphore and rate limit: redis-server behind the Upstash REST stand-in on ${upstash.url}`
    : REDIS_OFF
      ? 'NOTICE: REDIS=off, so the worker uses its in-process semaphore (one isolate only) and no rate limit.'
      : 'NOTICE: redis-server is not installed, so the worker uses its in-process semaphore (one isolate only) and no rate limit.\n        Install redis-server (e.g. apt-get install redis-server) to run the global semaphore locally.',
);

const wrangler = spawn(
  join(ROOT, 'node_modules/.bin/wrangler'),
  [
    'dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(PORT),
    '--inspector-port',
    String(INSPECTOR_PORT),
    // The OAuth KV namespace (clients, grants' tokens) survives restarts with the database.
    '--persist-to',
    join(LOCAL_DATA, 'wrangler'),
    '--var',
    `DATABASE_URL:${databaseUrl}`,
    ...redisVars,
    '--var',
    `SANDBOX_URL:${sandbox.url}`,
    ...passedVars,
    '--test-scheduled',
    '--show-interactive-dev-session=false',
  ],
  { cwd: ROOT, env: wranglerEnv(ROOT, { offline: true }), stdio: ['ignore', 'pipe', 'inherit'], detached: true },
);
let announced = false;
wrangler.stdout.on('data', (chunk: Buffer) => {
  process.stdout.write(chunk);
  if (!announced && chunk.toString().includes('Ready on')) {
    announced = true;
    announce(demo.apiKey);
  }
});

let stopping = false;
async function stop(code: number) {
  if (stopping) return;
  stopping = true;
  // wrangler leaves workerd children behind unless its whole process group is stopped.
  if (wrangler.pid && wrangler.exitCode === null) process.kill(-wrangler.pid, 'SIGTERM');
  sandbox.stop();
  await upstash?.close();
  await redis?.stop();
  await neon.close();
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
wrangler.on('exit', (code) => void stop(code ?? 0));

function announce(apiKey: string) {
  const base = `http://127.0.0.1:${PORT}`;
  console.log(`
edge-tools is running on ${base}
  Demo project API key: ${apiKey}
  Catalog:   curl ${base}/tools
  Code mode: POST ${base}/code or MCP ${base}/mcp/code (docs/code-mode.md); its sandbox host: ${sandbox.url}/health
  Dashboard: ${base}/dashboard (paste the key above)
  Traces:    curl -H 'Authorization: Bearer ${apiKey}' '${base}/executions?status=failure'
  MCP:       ${base}/mcp (or ${base}/mcp/study, ...): an MCP client with OAuth opens the consent page; approve with the key above.
  Ports, all on 127.0.0.1 (each chosen by its variable; 0 for any free port):
    ${String(PORT).padEnd(6)}the gateway (PORT)
    ${String(INSPECTOR_PORT).padEnd(6)}workerd's DevTools inspector (INSPECTOR_PORT; wrangler dev always opens one)
    ${new URL(databaseUrl).port.padEnd(6)}the Neon stand-in, Postgres over HTTP (NEON_PORT)
${
  redis && upstash
    ? `    ${new URL(upstash.url).port.padEnd(6)}the Upstash REST stand-in (UPSTASH_PORT)\n    ${String(redis.port).padEnd(6)}redis-server (REDIS_PORT; REDIS=off runs without it)`
    : '    no Redis: the in-process semaphore'
}
    ${new URL(sandbox.url).port.padEnd(6)}code mode's sandbox host (SANDBOX_PORT); each execution's workerd takes ports of its own
    and a few that wrangler and workerd choose for themselves, to talk to each other.
  Requests the worker sent to the stand-ins: curl http://127.0.0.1:${neon.port}/__stats${upstash ? ` and curl ${upstash.url}/__stats` : ''}
  Try a tool:
    curl -s ${base}/tools/log-mood \\
      -H 'Authorization: Bearer ${apiKey}' -H 'Content-Type: application/json' \\
      -d '{"user_id":"user_123","mood":"happy","energy_level":7,"timestamp":"${new Date().toISOString().slice(0, 19)}Z"}'
Press Ctrl-C to stop.
`);
}
