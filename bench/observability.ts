/**
 * Observability benchmark: GET /metrics and GET /executions over 100,000 executions of one
 * project (plus 20,000 of another tenant in the same table), in a fresh in-memory Neon stand-in
 * (PGlite in this process). Run with `node bench/observability.ts`; `runObservabilityBench()`
 * returns the report as a markdown section for bench/RESULTS.md.
 *
 * - The calls are the routes' own functions (`readMetrics`, `listExecutions`) through the real
 *   drizzle/neon-http client. Database time: the call, from sending the statements to parsing the
 *   rows (one HTTP round trip each; shaping the answer in JS costs microseconds).
 * - Plans: each statement the call sent is read back from the request and run again with
 *   `EXPLAIN (ANALYZE)` (untimed): the access path on tool_executions and Postgres' execution time.
 * - The peer: the same calls on the same rows without the observability indexes (only the
 *   primary keys), to show what the indexes buy.
 *
 * Data (deterministic, setseed): 10 tools, executions spread evenly over the last 30 days,
 * durations log-normal (median 20 ms), 5 % failures over four error codes, 2 % retried, 0.5 %
 * over the slow-call threshold, 10 % queued; 3,000 refusals.
 */
import { sql } from 'drizzle-orm';
import { createProject, migrateDatabase } from '../local/database.ts';
import { startNeonStandIn, type NeonStandIn } from '../local/neon-http.ts';
import { interceptDatabase } from './database-fetch.ts';
import { listExecutions, executionsQuery } from '../shared/observability/executions.ts';
import { readMetrics, resolveWindow, type MetricsWindow } from '../shared/observability/metrics.ts';
import { createDb } from '../shared/runtime/db.ts';
import type { Database } from '../shared/core/database.ts';
import { injectRoundTrips, percentile, thousands } from './measure.ts';

const BENCH = {
  executions: 100_000,
  otherTenantExecutions: 20_000,
  refusals: 3_000,
  days: 30,
  calls: 30,
  warmup: 3,
} as const;

const OBSERVABILITY_INDEXES = [
  'tool_executions_project_created_idx',
  'tool_executions_project_tool_created_idx',
  'tool_executions_project_failures_idx',
  'tool_executions_project_otel_trace_idx',
  'tool_executions_project_duration_idx',
  'tool_executions_created_idx',
  'tool_refusals_project_created_idx',
  'tool_refusals_created_idx',
] as const;

interface Case {
  name: string;
  /** Executions of the project the call reads (in its window or matching its filters). */
  rows: () => Promise<number>;
  call: () => Promise<unknown>;
}

interface Measured {
  p50: number;
  p95: number;
  plans: string[];
  executionMs: number;
}

/** Runs the benchmark and returns its report as a markdown section. */
export async function runObservabilityBench(): Promise<string> {
  const standIn = await startNeonStandIn();
  const captured = captureStatements();
  try {
    await migrateDatabase(standIn.connectionString);
    const db = createDb(standIn.connectionString);
    const project = await createProject(standIn.connectionString, 'Observability bench');
    const other = await createProject(standIn.connectionString, 'Other tenant');
    log(`loading ${thousands(BENCH.executions)} executions (+${thousands(BENCH.otherTenantExecutions)} of another tenant)...`);
    const loaded = performance.now();
    await load(db, project.projectId, other.projectId);
    log(`loaded in ${((performance.now() - loaded) / 1000).toFixed(1)} s`);
    injectRoundTrips({ neon: standIn });

    const cases = observabilityCases(db, project.projectId, await cursorAfter(db, project.projectId, 50));

    const rows = await Promise.all(cases.map((c) => c.rows()));
    const withIndexes: Measured[] = [];
    for (const c of cases) {
      log(`with indexes: ${c.name}`);
      withIndexes.push(await measure(c, captured, standIn));
    }
    await db.execute(sql.raw(`drop index ${OBSERVABILITY_INDEXES.join(', ')}`));
    await db.execute(sql`analyze tool_executions`);
    const without: Measured[] = [];
    for (const c of cases) {
      log(`without indexes: ${c.name}`);
      without.push(await measure(c, captured, standIn));
    }
    return report(cases, rows, withIndexes, without);
  } finally {
    captured.restore();
    await standIn.close();
  }
}

/** The reads measured: the metrics over several windows, and pages of the executions, filtered; each with the rows in its scope. */
function observabilityCases(db: Database, projectId: string, deepCursor: string): Case[] {
  const now = new Date();
  const window = (query: Parameters<typeof resolveWindow>[0]) => resolveWindow(query, now) as MetricsWindow;
  const countIn =
    (w: MetricsWindow, extra = sql``) =>
    async () =>
      Number(
        (
          (
            await db.execute(
              sql`select count(*)::int as n from tool_executions where project_id = ${projectId} and created_at >= ${w.since.toISOString()}::timestamptz and created_at < ${w.until.toISOString()}::timestamptz ${extra}`,
            )
          ).rows[0] as { n: number }
        ).n,
      );
  const all = window({ window: `${BENCH.days + 1}d` });
  const listing = (query: Record<string, unknown>) => executionsQuery.parse(query);

  const cases: Case[] = [
    { name: 'GET /metrics (24 h, default)', rows: countIn(window({})), call: () => readMetrics(db, projectId, window({})) },
    {
      name: 'GET /metrics?window=7d',
      rows: countIn(window({ window: '7d' })),
      call: () => readMetrics(db, projectId, window({ window: '7d' })),
    },
    {
      name: 'GET /metrics?window=30d (every execution)',
      rows: countIn(window({ window: '30d' })),
      call: () => readMetrics(db, projectId, window({ window: '30d' })),
    },
    {
      name: 'GET /metrics?window=7d&tool=semantic-search',
      rows: countIn(window({ window: '7d' }), sql`and tool = 'semantic-search'`),
      call: () => readMetrics(db, projectId, window({ window: '7d' }), 'semantic-search'),
    },
    { name: 'GET /executions (first page of 20)', rows: countIn(all), call: () => listExecutions(db, projectId, listing({})) },
    {
      name: 'GET /executions, page 51 (by cursor)',
      rows: countIn(all),
      call: () => listExecutions(db, projectId, listing({ cursor: deepCursor })),
    },
    {
      name: 'GET /executions?status=failure',
      rows: countIn(all, sql`and status = 'error'`),
      call: () => listExecutions(db, projectId, listing({ status: 'failure' })),
    },
    {
      name: 'GET /executions?tool=log-mood&response_format=detailed',
      rows: countIn(all, sql`and tool = 'log-mood'`),
      call: () => listExecutions(db, projectId, listing({ tool: 'log-mood', response_format: 'detailed' })),
    },
    {
      name: 'GET /executions?error_code=UPSTREAM_ERROR',
      rows: countIn(all, sql`and error_code = 'UPSTREAM_ERROR'`),
      call: () => listExecutions(db, projectId, listing({ error_code: 'UPSTREAM_ERROR' })),
    },
    {
      name: 'GET /executions?min_duration_ms=1000',
      rows: countIn(all, sql`and duration_ms >= 1000`),
      call: () => listExecutions(db, projectId, listing({ min_duration_ms: 1_000 })),
    },
  ];
  return cases;
}

/** Inserts the synthetic executions and refusals in SQL (generate_series), then analyzes. */
async function load(db: Database, projectId: string, otherProjectId: string): Promise<void> {
  await db.execute(sql`select setseed(0.42)`);
  for (const [project, count] of [
    [projectId, BENCH.executions],
    [otherProjectId, BENCH.otherTenantExecutions],
  ] as const) {
    await db.execute(sql`
      insert into tool_executions (id, project_id, tool, status, error_code, input, output, error, duration_ms, attempts, queued_ms,
                                   performance_warning, created_at, otel_trace_id, otel_span_id)
      select id, ${project}::uuid, tool,
             case when failed then 'error' else 'success' end,
             case when failed then (array['NOT_FOUND', 'VALIDATION_ERROR', 'DATABASE_ERROR', 'UPSTREAM_ERROR'])[1 + floor(r_code * 4)::int] end,
             jsonb_build_object('query', 'task ' || i, 'limit', 20),
             case when failed then null else jsonb_build_object('results', jsonb_build_array(i, i + 1), 'count', 2) end,
             case when failed then jsonb_build_object('code', 'NOT_FOUND', 'message', 'No task ' || i) end,
             duration, case when r_retry < 0.02 then 2 else 1 end,
             case when r_queue < 0.1 then r_wait * 400 else 0 end,
             duration > 5000,
             now() - make_interval(secs => r_age * ${BENCH.days * 86_400}),
             replace(id::text, '-', ''), substr(md5(id::text), 1, 16)
      from (
        select i, gen_random_uuid() as id, random() < 0.05 as failed, random() as r_code, random() as r_retry,
               random() as r_queue, random() as r_wait, random() as r_age,
               (array['log-mood', 'semantic-search', 'get-document-context', 'detect-dependencies', 'query-task-graph',
                      'cluster-by-similarity', 'add-document', 'replace-document', 'embed-tasks', 'submit-health-form'])[1 + floor(random() * 10)::int] as tool,
               -- log-normal, median 20 ms (Box-Muller); about 0.5 % above 5 s
               least(20 * exp(1.05 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())), 60000) as duration
        from generate_series(1, ${count}) as i
      ) generated`);
  }
  await db.execute(sql`
    insert into tool_refusals (id, project_id, tool, code, created_at)
    select gen_random_uuid(), ${projectId}::uuid, 'log-mood',
           (array['VALIDATION_ERROR', 'VALIDATION_ERROR', 'RATE_LIMITED', 'BUSY'])[1 + floor(random() * 4)::int],
           now() - make_interval(secs => random() * ${BENCH.days * 86_400})
    from generate_series(1, ${BENCH.refusals})`);
  await db.execute(sql`analyze tool_executions`);
  await db.execute(sql`analyze tool_refusals`);
}

/** The cursor of the page after the first `pages` pages of 20 (to time a deep page). */
async function cursorAfter(db: Database, projectId: string, pages: number): Promise<string> {
  let cursor: string | undefined;
  for (let page = 0; page < pages; page++) {
    const result = await listExecutions(db, projectId, executionsQuery.parse(cursor ? { cursor } : {}));
    if (!result.ok || !result.data.next_cursor) throw new Error('ran out of pages');
    cursor = result.data.next_cursor;
  }
  return cursor!;
}

async function measure(c: Case, captured: Captured, standIn: NeonStandIn): Promise<Measured> {
  const times: number[] = [];
  for (let i = 0; i < BENCH.warmup + BENCH.calls; i++) {
    const started = performance.now();
    const outcome = (await c.call()) as { ok: boolean; error?: { message: string } };
    const elapsed = performance.now() - started;
    if (!outcome.ok) throw new Error(`${c.name}: ${outcome.error?.message}`);
    if (i >= BENCH.warmup) times.push(elapsed);
  }
  const { plans, executionMs } = await explain(captured.last(), standIn);
  return { p50: percentile(times, 0.5), p95: percentile(times, 0.95), plans, executionMs };
}

/** EXPLAIN ANALYZE of each statement of a request: the access paths on the observability tables, and the summed execution time. */
async function explain(
  request: { query: string; params: unknown[] }[],
  standIn: NeonStandIn,
): Promise<{ plans: string[]; executionMs: number }> {
  const plans = new Set<string>();
  let executionMs = 0;
  for (const statement of request) {
    const response = await fetch(standIn.url, {
      method: 'POST',
      body: JSON.stringify({ query: `explain (analyze) ${statement.query}`, params: statement.params }),
    });
    const { rows } = (await response.json()) as { rows: string[][] };
    const lines = rows.map((row) => row[0]!);
    for (const line of lines) {
      const scan =
        /((?:Parallel )?(?:Index Only Scan|Index Scan|Bitmap Index Scan|Seq Scan)(?: Backward)?(?: using \w+)? on (?:tool_executions|tool_refusals)|Bitmap Index Scan on \w+)/.exec(
          line,
        )?.[1];
      if (scan) plans.add(scan.replace(/ on tool_executions$/, '').replace(/ on tool_refusals$/, ' (refusals)'));
    }
    executionMs += Number(/Execution Time: ([\d.]+) ms/.exec(lines.join('\n'))?.[1] ?? NaN);
  }
  return { plans: [...plans], executionMs };
}

interface Captured {
  /** The statements of the last request the database client sent. */
  last(): { query: string; params: unknown[] }[];
  restore(): void;
}

/** Records the body of every request of the database client (process-wide), until restore(). */
function captureStatements(): Captured {
  let last = '';
  const restore = interceptDatabase((url, init, forward) => {
    last = String(init.body);
    return forward(url, init);
  });
  return {
    last: () => {
      const body = JSON.parse(last) as { query: string; params: unknown[] } | { queries: { query: string; params: unknown[] }[] };
      return 'queries' in body ? body.queries : [body];
    },
    restore,
  };
}

function report(cases: Case[], rows: number[], withIndexes: Measured[], without: Measured[]): string {
  const lines = [
    '## Observability reads over 100,000 executions (bench/observability.ts)',
    '',
    `One project with ${thousands(BENCH.executions)} executions over ${BENCH.days} days and ${thousands(BENCH.refusals)} refusals, another tenant with ${thousands(BENCH.otherTenantExecutions)} executions in the same table; in-memory Neon stand-in (PGlite, WASM, in the bench's own process), Node ${process.version}. Database time: the route's function from sending its statements to parsing the rows (one HTTP round trip), p50 / p95 of ${BENCH.calls} calls after ${BENCH.warmup} warm-up calls. Postgres: the summed \`Execution Time\` of \`EXPLAIN (ANALYZE)\` over the call's statements (metrics sends four in one batch). Peer: the same calls after dropping the observability indexes (primary keys only).`,
    '',
    '| call | project rows read | p50 ms | p95 ms | Postgres ms | plan | without indexes: p50 ms | p95 ms | Postgres ms | plan |',
    '|---|---:|---:|---:|---:|---|---:|---:|---:|---|',
  ];
  cases.forEach((c, i) => {
    const a = withIndexes[i]!;
    const b = without[i]!;
    lines.push(
      `| ${c.name} | ${thousands(rows[i]!)} | ${ms(a.p50)} | ${ms(a.p95)} | ${ms(a.executionMs)} | ${a.plans.join('; ')} | ${ms(b.p50)} | ${ms(b.p95)} | ${ms(b.executionMs)} | ${b.plans.join('; ')} |`,
    );
  });
  return lines.join('\n');
}

function ms(x: number): string {
  return Number.isNaN(x) ? '?' : x < 10 ? x.toFixed(2) : x.toFixed(1);
}

function log(message: string): void {
  console.log(`  [observability] ${message}`);
}

if (import.meta.main) console.log(await runObservabilityBench());
