/**
 * What an idempotency key costs a write call: log-mood through the gateway (in Node) against the
 * Neon stand-in (PGlite behind Neon's HTTP protocol, on loopback), without a key, with a fresh key
 * (claim before, stored answer after), and repeated with the same key (a replay). Counts the
 * database requests of each call and times it. Run with `node bench/idempotency.ts`;
 * `runIdempotencyBench()` returns the same report as a markdown section for bench/RESULTS.md.
 *
 * The stand-in answers in about a millisecond; on Neon each request is a network round trip, so
 * the request counts are the figures that carry over.
 */
import { createGateway } from '../shared/http/app.ts';
import logMood from '../functions/table-tools/log-mood.ts';
import { createProject, migrateDatabase } from '../local/database.ts';
import { startNeonStandIn } from '../local/neon-http.ts';
import { injectRoundTrips } from './measure.ts';

const BENCH = { warmup: 30, calls: 300 };

type Row = { label: string; p50Ms: number; p99Ms: number; requests: number; executions: number };

/** Runs the benchmark and returns its report as a markdown section. */
export async function runIdempotencyBench(): Promise<string> {
  const neon = await startNeonStandIn();
  try {
    await migrateDatabase(neon.connectionString);
    const project = await createProject(neon.connectionString, 'Idempotency bench');
    injectRoundTrips({ neon });
    let requests = 0;
    const realFetch = globalThis.fetch;
    globalThis.fetch = ((input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      if (String(input instanceof Request ? input.url : input).startsWith(`http://127.0.0.1:${neon.port}/`)) requests++;
      return realFetch(input, init);
    }) as typeof fetch;

    const gateway = createGateway([logMood]);
    const env = { DATABASE_URL: neon.connectionString };
    const pending: Promise<unknown>[] = [];
    const ctx = { waitUntil: (p: Promise<unknown>) => void pending.push(p), passThroughOnException() {}, props: {} };
    let minute = 0;
    const input = () => ({
      user_id: 'bench_user',
      mood: 'happy',
      energy_level: 7,
      timestamp: new Date(Date.UTC(2031, 0, 1, 0, minute++)).toISOString(),
    });

    /** One call; answers its database requests on the critical path and whether the tool ran. */
    const call = async (body: unknown, key?: string): Promise<{ ms: number; requests: number; executed: boolean }> => {
      const headers: Record<string, string> = { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json' };
      if (key) headers['idempotency-key'] = `"${key}"`;
      requests = 0;
      const started = performance.now();
      const response = await gateway.fetch(
        new Request('http://bench/tools/log-mood', { method: 'POST', headers, body: JSON.stringify(body) }),
        env,
        ctx as unknown as Parameters<typeof gateway.fetch>[2],
      );
      const answer = (await response.json()) as { success: boolean; meta: { attempts: number; replayed?: boolean } };
      const ms = performance.now() - started;
      const onPath = requests;
      await Promise.all(pending.splice(0)); // the trace and the purge, after the response
      if (!answer.success) throw new Error(`bench call failed: ${JSON.stringify(answer)}`);
      return { ms, requests: onPath, executed: answer.meta.attempts > 0 };
    };

    const scenarios: [label: string, run: () => Promise<{ ms: number; requests: number; executed: boolean }>][] = [
      ['no key', () => call(input())],
      ['a fresh key (claim + stored answer)', () => call(input(), crypto.randomUUID())],
      [
        'the same key again (replay)',
        (() => {
          const body = input();
          const key = crypto.randomUUID();
          let first = true;
          return async () => {
            if (first) {
              first = false;
              await call(body, key);
            }
            return call(body, key);
          };
        })(),
      ],
    ];
    const rows: Row[] = [];
    for (const [label, run] of scenarios) rows.push(await measureScenario(label, run));
    globalThis.fetch = realFetch;
    return [
      `## What an idempotency key adds to a write call (log-mood, Neon stand-in on loopback, ${BENCH.calls} sequential calls each)`,
      '',
      '| call | p50 ms | p99 ms | database requests before the answer, per call | executions |',
      '|---|---:|---:|---:|---:|',
      ...rows.map((r) => `| ${r.label} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${r.requests.toFixed(2)} | ${r.executions} |`),
    ].join('\n');
  } finally {
    await neon.close();
  }
}

/** One scenario: its warm-up calls, then BENCH.calls timed ones (p50, p99), their database requests per call and how many executed. */
async function measureScenario(label: string, run: () => Promise<{ ms: number; requests: number; executed: boolean }>): Promise<Row> {
  for (let i = 0; i < BENCH.warmup; i++) await run();
  const samples: number[] = [];
  let totalRequests = 0;
  let executions = 0;
  for (let i = 0; i < BENCH.calls; i++) {
    const { ms, requests: used, executed } = await run();
    samples.push(ms);
    totalRequests += used;
    if (executed) executions++;
  }
  samples.sort((a, b) => a - b);
  return {
    label,
    p50Ms: samples[Math.floor(samples.length * 0.5)]!,
    p99Ms: samples[Math.floor(samples.length * 0.99)]!,
    requests: totalRequests / BENCH.calls,
    executions,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await runIdempotencyBench());
