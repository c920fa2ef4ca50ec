/**
 * The pipeline's own cost without I/O, for a valid and an invalid log-mood call:
 * - "edge-tools HTTP": a Request through the gateway (route, auth from the isolate cache, body
 *   read, parse, screen, validate, execute, output check, envelope, JSON response, trace record
 *   handed to waitUntil);
 * - "edge-tools core": validate -> execute -> envelope, the same work as the peer's execute;
 * - "Mastra createTool": the same zod schema through `createTool(...).execute` (a widely used TypeScript agent framework).
 * Every execute is a no-op, so only the framework is measured. The database is an in-memory
 * responder behind the database client's fetch (bench/database-fetch.ts): the trace insert is built and "sent", never waited on.
 * zod runs jitless, as it does on Workers.
 */
import { createTool } from '@mastra/core/tools';
import * as z from 'zod';
import logMood from '../functions/table-tools/log-mood.ts';
import { interceptDatabase } from './database-fetch.ts';
import { injectRoundTrips } from './measure.ts';
import { createGateway } from '../shared/http/app.ts';
import { hashApiKey } from '../shared/auth/keys.ts';
import { envelope, ok } from '../shared/core/contract.ts';
import { defineTool } from '../shared/core/tool.ts';
import { validateInput } from '../shared/core/validation.ts';

z.config({ jitless: true });

const API_KEY = 'et_bench_key';
const PROJECT_ID = '00000000-0000-4000-8000-000000000001';
const VALID = { user_id: 'user_123', mood: 'happy', energy_level: 7, timestamp: '2025-10-05T14:30:00Z', notes: 'Slept well' };
const INVALID = { user_id: 'user_123', mood: 'excited', energy_level: 15, timestamp: '2025-10-05T14:30:00Z' };
const RESULT = { id: '0b6e4c2e-8d1f-4a6b-9c3e-5f7a2b1d4e60', row_count: 1, message: 'Logged mood entry' };

export interface Figures {
  name: string;
  p50Us: number;
  p99Us: number;
  callsPerSecond: number;
}

/**
 * Answers the database client's SQL-over-HTTP requests from memory: the key lookup, and empty results
 * otherwise. Returns what puts the global fetch back (for the benches run after this one).
 */
async function inMemoryNeon(keyHash: string): Promise<() => void> {
  const answer = ({ query }: { query: string }) => {
    // The key lookup of shared/auth/keys.ts, column for column: key id, key hash, project id and
    // name, rate limit, toolsets (null: every toolset). Any other statement gets no rows. The
    // project's limit is lifted far above the calls a run sends, so that the limiter still runs
    // for every call and never refuses one (a refusal would be timed instead of an admission).
    const keyLookup = query.includes('"api_keys"');
    const rows = keyLookup ? [[PROJECT_ID, keyHash, PROJECT_ID, 'Bench project', 1_000_000, null]] : [];
    const fields = keyLookup
      ? ['id', 'key_hash', 'id', 'name', 'rate_limit_per_minute', 'toolsets'].map((name) => ({ name, dataTypeID: 25 }))
      : [];
    return { fields, rows, command: 'SELECT', rowCount: rows.length, rowAsArray: true };
  };
  return interceptDatabase(async (_url, init) => {
    // One statement, or a transaction (the trace's batch) answered statement by statement.
    const body = JSON.parse(String(init.body)) as { query: string } | { queries: { query: string }[] };
    return Response.json('queries' in body ? { results: body.queries.map(answer) } : answer(body));
  });
}

/** What a timed call must answer: the tool's result, or a VALIDATION_ERROR refusal. */
type Expected = 'ok' | 'invalid';

/**
 * Stops the bench when a timed call did not answer what it was meant to: timing failures (an
 * UNKNOWN_ERROR from a database stand-in that drifted from the code) measures the wrong path.
 */
function expectAnswer(what: string, expected: Expected, status: number, body: unknown): void {
  const answer = body as { success?: boolean; error?: { code?: string } };
  const answered =
    expected === 'ok' ? status === 200 && answer.success === true : status === 400 && answer.error?.code === 'VALIDATION_ERROR';
  if (!answered) {
    throw new Error(
      `${what} answered ${status} ${JSON.stringify(body).slice(0, 300)}, expected ${expected === 'ok' ? '200 and success' : '400 VALIDATION_ERROR'}: the bench would time the wrong work.`,
    );
  }
}

/** Times `call` (after a warm-up); `settle` runs between calls, outside the timed region. */
async function measure(name: string, iterations: number, call: () => Promise<unknown>, settle?: () => Promise<unknown>): Promise<Figures> {
  for (let i = 0; i < Math.min(2_000, iterations); i++) {
    await call();
    await settle?.();
  }
  const samples = new Float64Array(iterations);
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) {
    const t0 = process.hrtime.bigint();
    await call();
    samples[i] = Number(process.hrtime.bigint() - t0) / 1_000;
    await settle?.();
  }
  const totalSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  samples.sort();
  return {
    name,
    p50Us: samples[Math.floor(iterations * 0.5)]!,
    p99Us: samples[Math.floor(iterations * 0.99)]!,
    callsPerSecond: iterations / totalSeconds,
  };
}

export async function runPipelineBench(iterations = 20_000): Promise<{ valid: Figures[]; invalid: Figures[] }> {
  const restoreNeon = await inMemoryNeon(await hashApiKey(API_KEY));
  const benchTool = defineTool({
    id: logMood.id,
    toolset: 'documents',
    title: logMood.title,
    annotations: logMood.annotations,
    description: logMood.description,
    input: logMood.input,
    output: logMood.output,
    example: logMood.example,
    execute: async () => ok(RESULT, RESULT.message),
  });
  const gateway = createGateway([benchTool]);
  const env = { DATABASE_URL: 'postgres://bench:bench@db.bench.invalid/bench', ALLOW_IN_PROCESS_SEMAPHORE: 'true' };
  const pending: Promise<unknown>[] = [];
  const ctx = { waitUntil: (p: Promise<unknown>) => void pending.push(p), passThroughOnException() {}, props: {} };
  const http = (body: unknown, expected: Expected) => async () => {
    const request = new Request('http://bench/tools/log-mood', {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const response = await gateway.fetch(request, env, ctx as unknown as Parameters<typeof gateway.fetch>[2]);
    expectAnswer('edge-tools HTTP', expected, response.status, await response.json());
    if (pending.length > 1_000) await Promise.all(pending.splice(0));
  };
  const meta = { tool: 'log-mood', trace_id: 'bench', duration_ms: 0, attempts: 1, queued_ms: 0, performance_warning: false };
  const core = (body: unknown, expected: Expected) => async () => {
    const input = validateInput(benchTool.input, body, benchTool.hint);
    const outcome = input.ok ? await benchTool.execute(input.value, undefined as never) : input;
    const answer = envelope(outcome, meta);
    expectAnswer('edge-tools core', expected, outcome.ok ? 200 : 400, answer);
  };
  const mastra = createTool({
    id: 'log-mood',
    description: logMood.description,
    inputSchema: logMood.input,
    outputSchema: logMood.output,
    execute: async () => RESULT,
  });
  const peer = (body: unknown, expected: Expected) => async () => {
    const result = (await mastra.execute!(body as never, {} as never)) as { error?: boolean; id?: string };
    // Mastra answers a validation failure as `{ error: true, message, validationErrors }`.
    const answered = expected === 'ok' ? result.id === RESULT.id : result.error === true;
    if (!answered)
      throw new Error(
        `Mastra createTool().execute answered ${JSON.stringify(result).slice(0, 300)}, expected ${expected === 'ok' ? 'the result' : 'a validation error'}: the bench would time the wrong work.`,
      );
  };

  const run = async (body: unknown, expected: Expected) => [
    await measure('edge-tools HTTP (gateway.fetch)', iterations, http(body, expected)),
    await measure('edge-tools core (validate, execute, envelope)', iterations, core(body, expected)),
    await measure('Mastra createTool().execute', iterations, peer(body, expected)),
  ];
  const valid = await run(VALID, 'ok');
  // Every refusal logs a warning line: it is built as in production, but not written to this
  // terminal 40,000 times (on Workers, the platform collects it).
  const warn = console.warn;
  console.warn = () => {};
  try {
    const invalid = await run(INVALID, 'invalid');
    await Promise.all(pending);
    return { valid, invalid };
  } finally {
    console.warn = warn;
    restoreNeon();
  }
}

/**
 * What admission (rate limit + semaphore acquire, release off the critical path) adds to one
 * uncontended call: the same no-op call through the gateway, with the in-process semaphore and with
 * the Redis semaphore (redis-server behind the Upstash REST stand-in, on loopback), plus the Redis
 * HTTP requests sent while the call was on its critical path, and the database requests (the key's
 * re-check, once its cached verification is a second old, runs alongside admission).
 */
export async function runAdmissionBench(iterations = 500): Promise<string> {
  const { startRedisServer, startUpstashStandIn } = await import('../local/upstash-rest.ts');
  const redis = await startRedisServer();
  if (!redis) return '_redis-server is not installed: admission cost not measured._';
  const upstash = await startUpstashStandIn({ redisPort: redis.port, token: 'bench' });
  injectRoundTrips({ upstash });
  const restoreNeon = await inMemoryNeon(await hashApiKey(API_KEY));
  try {
    let redisRequests = 0;
    let beforeExecution = 0;
    let databaseRequests = 0;
    let databaseBeforeExecution = 0;
    const benchTool = defineTool({
      ...logMood,
      execute: async () => {
        beforeExecution += redisRequests;
        databaseBeforeExecution += databaseRequests;
        return ok(RESULT, RESULT.message);
      },
    });
    const gateway = createGateway([benchTool]);
    const pending: Promise<unknown>[] = [];
    const ctx = { waitUntil: (p: Promise<unknown>) => void pending.push(p), passThroughOnException() {}, props: {} };
    const realFetch = globalThis.fetch;
    globalThis.fetch = ((input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      const url = String(input instanceof Request ? input.url : input);
      if (url.startsWith(upstash.url)) redisRequests++;
      else if (new URL(url).pathname === '/sql') databaseRequests++;
      return realFetch(input, init);
    }) as typeof fetch;
    const rows: string[] = [];
    for (const [label, env] of [
      ['in-process semaphore', { DATABASE_URL: 'postgres://bench:bench@db.bench.invalid/bench', ALLOW_IN_PROCESS_SEMAPHORE: 'true' }],
      [
        'Redis semaphore + rate limit',
        {
          DATABASE_URL: 'postgres://bench:bench@db.bench.invalid/bench',
          UPSTASH_REDIS_REST_URL: upstash.url,
          UPSTASH_REDIS_REST_TOKEN: upstash.token,
        },
      ],
    ] as const) {
      beforeExecution = 0;
      databaseBeforeExecution = 0;
      const figures = await measure(
        label,
        iterations,
        async () => {
          redisRequests = 0;
          databaseRequests = 0;
          const response = await gateway.fetch(
            new Request('http://bench/tools/log-mood', {
              method: 'POST',
              headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
              body: JSON.stringify(VALID),
            }),
            env,
            ctx as unknown as Parameters<typeof gateway.fetch>[2],
          );
          expectAnswer(label, 'ok', response.status, await response.json());
        },
        () => Promise.all(pending.splice(0)),
      );
      const calls = iterations + Math.min(2_000, iterations);
      rows.push(
        `| ${label} | ${figures.p50Us.toFixed(0)} | ${figures.p99Us.toFixed(0)} | ${(beforeExecution / calls).toFixed(2)} | ${(databaseBeforeExecution / calls).toFixed(3)} |`,
      );
    }
    globalThis.fetch = realFetch;
    return [
      '| admission | p50 µs | p99 µs | Redis HTTP requests before execution, per call | database requests before execution, per call |',
      '|---|---:|---:|---:|---:|',
      ...rows,
    ].join('\n');
  } finally {
    restoreNeon();
    await upstash.close();
    await redis.stop();
  }
}

export function pipelineMarkdown({ valid, invalid }: { valid: Figures[]; invalid: Figures[] }): string {
  const rows = (label: string, figures: Figures[]) =>
    figures.map(
      (f) =>
        `| ${label} | ${f.name} | ${f.p50Us.toFixed(1)} | ${f.p99Us.toFixed(1)} | ${Math.round(f.callsPerSecond).toLocaleString('en')} |`,
    );
  return [
    '| call | implementation | p50 µs | p99 µs | calls/s |',
    '|---|---|---:|---:|---:|',
    ...rows('valid', valid),
    ...rows('invalid', invalid),
  ].join('\n');
}

if (import.meta.main) console.log(pipelineMarkdown(await runPipelineBench()));
