/**
 * A real Prometheus (Debian's `prometheus`) scraping the real worker under `wrangler dev`, at two
 * scrape intervals, while a known number of calls is made. Prometheus itself is the judge, through
 * its HTTP query API: `increase()` of the call counter must equal the calls made, and
 * `histogram_quantile(0.95, …)` must fall in the bucket that holds the true 95th percentile of the
 * durations the calls were answered with.
 *
 * `increase()` extrapolates to the ends of its range unless samples sit on them, so the range
 * asked for runs exactly from a scrape before the first call to the first scrape after the last.
 *
 * Without prometheus (install Debian's package) it is skipped, loudly; CI installs it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createProject, migrateDatabase, type CreatedProject } from '../../local/database.ts';
import { startNeonStandIn, type NeonStandIn } from '../../local/neon-http.ts';
import { freePort, startWranglerDev, type WranglerDev } from '../../local/wrangler-dev.ts';
import { DURATION_BUCKETS } from '../../shared/observability/counters.ts';

const hasPrometheus = spawnSync('prometheus', ['--version']).status === 0;
if (!hasPrometheus) console.warn('\n!!! prometheus not found: the scrape test is SKIPPED. Install it (apt-get install prometheus).\n');

/** Calls per run: the 95th percentile is the 19th of 20 durations. */
const CALLS = 20;

type Sample = [number, string];
type QueryResult = { metric: Record<string, string>; value?: Sample; values?: Sample[] }[];

describe.skipIf(!hasPrometheus)('Prometheus scraping the gateway', () => {
  let neon: NeonStandIn;
  let worker: WranglerDev | undefined;
  let tenant: CreatedProject;
  const temporary = mkdtempSync(join(tmpdir(), 'edge-tools-prometheus-'));
  let made = 0;

  beforeAll(async () => {
    neon = await startNeonStandIn();
    await migrateDatabase(neon.connectionString);
    tenant = await createProject(neon.connectionString, 'Scraped tenant');
    worker = await startWranglerDev({
      vars: { DATABASE_URL: neon.connectionString },
      persistTo: join(temporary, 'wrangler-state'),
      sandbox: false,
    });
  }, 120_000);

  afterAll(async () => {
    worker?.stop();
    await neon?.close();
    rmSync(temporary, { recursive: true, force: true });
  });

  /** One successful call of log-mood; its answer's meta.duration_ms is what the histogram observes. */
  async function logMood(): Promise<number> {
    made++;
    const response = await fetch(`${worker!.url}/tools/log-mood`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        user_id: 'scraped_user',
        mood: 'happy',
        energy_level: 5,
        timestamp: new Date(Date.UTC(2030, 0, 1, 0, made)).toISOString(),
      }),
    });
    const body = (await response.json()) as { success: boolean; meta: { duration_ms: number } };
    expect(body.success).toBe(true);
    return body.meta.duration_ms / 1000;
  }

  it.each([1, 2])(
    'counts every call, and estimates p95 in the right bucket, scraped every %i s',
    async (intervalSeconds) => {
      const prometheus = await startPrometheus(worker!.url, tenant.apiKey, intervalSeconds, join(temporary, `tsdb-${intervalSeconds}`));
      try {
        const series = `edge_tools_tool_calls_total{tool="log-mood",outcome="success"}`;
        // A scrape before the calls: the series is there (at 0 the first time) before the first call.
        const before = Number((await prometheus.waitFor(series, () => true)).value![1]);
        const durations: number[] = [];
        for (let i = 0; i < CALLS; i++) durations.push(await logMood());
        // Counts are written after each answer: wait for a scrape that has them all.
        await prometheus.waitFor(series, (value) => value === before + CALLS);

        const samples = (await prometheus.query(`${series}[10m]`))[0]!.values!;
        const first = samples.find(([, value]) => Number(value) === before)!;
        const last = samples.find(([, value]) => Number(value) === before + CALLS)!;
        const rangeMs = Math.round((last[0] - first[0]) * 1000);
        const at = String(last[0]);
        const increase = await prometheus.query(`sum(increase(edge_tools_tool_calls_total{tool="log-mood"}[${rangeMs}ms]))`, at);
        expect(Number(increase[0]!.value![1])).toBe(CALLS);

        const estimate = Number(
          (
            await prometheus.query(
              `histogram_quantile(0.95, sum by (le) (increase(edge_tools_tool_duration_seconds_bucket{tool="log-mood"}[${rangeMs}ms])))`,
              at,
            )
          )[0]!.value![1],
        );
        const p95 = [...durations].sort((a, b) => a - b)[Math.ceil(0.95 * CALLS) - 1]!;
        const upper = DURATION_BUCKETS.find((bound) => p95 <= bound) ?? Infinity;
        const lower = [0, ...DURATION_BUCKETS].filter((bound) => bound < p95).at(-1)!;
        expect(estimate).toBeGreaterThanOrEqual(lower);
        expect(estimate).toBeLessThanOrEqual(upper === Infinity ? DURATION_BUCKETS.at(-1)! : upper);
      } finally {
        prometheus.stop();
      }
    },
    60_000,
  );
});

interface RunningPrometheus {
  /** An instant query (at `time`, Unix seconds, default now) through the HTTP API. */
  query(expression: string, time?: string): Promise<QueryResult>;
  /** Polls `selector` until its one series has a value `accept` takes. */
  waitFor(selector: string, accept: (value: number) => boolean): Promise<QueryResult[number]>;
  stop(): void;
}

/** Starts Prometheus on 127.0.0.1 scraping the gateway's /metrics with the key, storing into `storage`. */
async function startPrometheus(target: string, apiKey: string, intervalSeconds: number, storage: string): Promise<RunningPrometheus> {
  const port = await freePort();
  const config = join(storage + '.yml');
  writeFileSync(
    config,
    JSON.stringify({
      global: { scrape_interval: `${intervalSeconds}s`, scrape_timeout: `${intervalSeconds}s` },
      scrape_configs: [
        {
          job_name: 'edge-tools',
          metrics_path: '/metrics',
          params: { format: ['prometheus'] },
          authorization: { credentials: apiKey },
          static_configs: [{ targets: [new URL(target).host] }],
        },
      ],
    }),
  );
  const child: ChildProcess = spawn(
    'prometheus',
    [`--config.file=${config}`, `--storage.tsdb.path=${storage}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
  );
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => void (output += chunk.toString()));
  const stop = () => {
    if (child.pid && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
  };
  const api = `http://127.0.0.1:${port}/api/v1`;
  const query = async (expression: string, time?: string): Promise<QueryResult> => {
    const params = new URLSearchParams({ query: expression, ...(time && { time }) });
    const response = await fetch(`${api}/query?${params}`);
    const body = (await response.json()) as { status: string; error?: string; data: { result: QueryResult } };
    if (body.status !== 'success') throw new Error(`${expression}: ${body.error}`);
    return body.data.result;
  };
  const waitFor = async (selector: string, accept: (value: number) => boolean) => {
    let found: QueryResult[number] | undefined;
    await vi.waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`prometheus exited: ${output.slice(-1_000)}`);
        const result = await query(selector).catch(() => []);
        found = result.length === 1 && accept(Number(result[0]!.value![1])) ? result[0] : undefined;
        expect(found, selector).toBeDefined();
      },
      { timeout: 30_000, interval: 250 },
    );
    return found!;
  };
  return { query, waitFor, stop };
}
