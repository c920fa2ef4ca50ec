/**
 * Metrics per tool over a time window (`GET /metrics`), computed in SQL from the trace: calls,
 * successes, failures by error code, success rate, duration avg / p50 / p95 / p99 / max
 * (`percentile_cont`), queue wait p50 / p95, retried calls, performance warnings, and the calls
 * refused before executing (from `tool_refusals`), plus a time series in buckets for charts.
 * Five statements, sent in one round trip; indexes on (project_id, created_at) keep them to the
 * window's rows.
 */
import { inArray, sql, type SQL } from 'drizzle-orm';
import * as z from 'zod';
import { fail, ok, type Failure, type Outcome } from '../core/contract.ts';
import { dateTime } from '../core/fields.ts';
import { plural } from '../core/plural.ts';
import type { Database } from '../core/database.ts';
import { roundToHundredths } from '../core/numbers.ts';

const WINDOW = /^([1-9]\d{0,6})([smhd])$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export const METRICS_DEFAULTS = { windowMs: 86_400_000, maxWindowMs: 400 * 86_400_000, maxBuckets: 60 } as const;

/** The first instant of year 0001: a window ending early in it cannot reach further back (Postgres has no year 0000). */
const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00Z');

/** Bucket widths the time series may use, in seconds: the narrowest that gives at most 60 buckets wins. */
const BUCKET_SECONDS = [60, 300, 900, 1_800, 3_600, 10_800, 21_600, 43_200, 86_400, 604_800] as const;

/** The query of `GET /metrics`. */
export const metricsQuery = z.strictObject({
  window: z
    .string()
    .regex(WINDOW, 'must be a number followed by s, m, h or d, e.g. 15s, 15m, 24h or 7d')
    .optional()
    .describe('The last N seconds, minutes, hours or days before until: 15s, 15m, 24h, 7d (default 24h). Not together with since.'),
  since: dateTime()
    .optional()
    .describe('Start of the window (RFC 3339 with a time zone, as tool inputs take them), inclusive. Not together with window.'),
  until: dateTime().optional().describe('End of the window, exclusive (default: now).'),
  tool: z.string().min(1).max(100).optional().describe('Only this tool (its id).'),
  format: z
    .enum(['json', 'prometheus'])
    .default('json')
    .describe('json: the envelope. prometheus: the same figures in the Prometheus text exposition format (for scraping).'),
});

export type MetricsQuery = z.output<typeof metricsQuery>;

const ms = z.number().nullable();
const figures = {
  calls: z.int().describe('Executions (refused calls are not executions; they are counted below).'),
  successes: z.int(),
  failures: z.int(),
  success_rate: z.number().nullable().describe('successes / calls, from 0 to 1; null without calls.'),
  failures_by_code: z.record(z.string(), z.int()).describe('Failed executions by error code.'),
  duration_ms: z
    .object({ avg: ms, p50: ms, p95: ms, p99: ms, max: ms })
    .describe('Execution duration (queue wait included); null without calls.'),
  queued_ms: z.object({ avg: ms, p50: ms, p95: ms }).describe('Wait for an execution slot.'),
  retried_calls: z.int().describe('Executions that needed more than one attempt.'),
  performance_warnings: z.int().describe('Executions over the slow-call threshold (5 s).'),
  validation_refusals: z.int().describe('Calls refused for their input (VALIDATION_ERROR, PAYLOAD_TOO_LARGE).'),
  rate_limit_refusals: z.int().describe('Calls refused by the per-key rate limit (RATE_LIMITED).'),
  busy_refusals: z.int().describe('Calls that got no execution slot in time (BUSY).'),
};

/** The figures of one tool (or of all, in `totals`). */
export const toolMetrics = z.object({
  tool: z.string(),
  ...figures,
  series: z
    .object({ calls: z.array(z.int()), failures: z.array(z.int()) })
    .describe("The tool's executions and failures in each bucket of the window's series, oldest first: its sparklines."),
});

/** The data of `GET /metrics`. */
export const metricsData = z.object({
  window: z.object({
    since: z.string(),
    until: z.string(),
    bucket_seconds: z.int().describe('Width of each point of the series.'),
  }),
  totals: z.object(figures),
  tools: z.array(toolMetrics).describe('Tools with executions or refusals in the window, most called first.'),
  series: z
    .array(
      z.object({
        start: z.string(),
        calls: z.int(),
        failures: z.int(),
        duration_ms_p50: ms,
        duration_ms_p95: ms,
      }),
    )
    .describe('Every bucket of the window, oldest first (empty ones included, with null percentiles).'),
});

export type ToolMetrics = z.output<typeof toolMetrics>;
export type Metrics = z.output<typeof metricsData>;
type Figures = Omit<ToolMetrics, 'tool' | 'series'>;

/** A resolved window: where it starts and ends, and the width of the series' buckets. */
export interface MetricsWindow {
  since: Date;
  until: Date;
  bucketSeconds: number;
}

const HINT = 'Example of a valid call: GET /metrics?window=24h (or ?since=2025-10-05T00:00:00Z&until=2025-10-06T00:00:00Z)';

/** The window a query asks for (default: the 24 hours before now), or VALIDATION_ERROR. */
export function resolveWindow(query: Pick<MetricsQuery, 'window' | 'since' | 'until'>, now: Date = new Date()): MetricsWindow | Failure {
  if (query.window !== undefined && query.since !== undefined) {
    return invalid('window', "Pass either 'window' or 'since', not both.", 'window or since', 'both');
  }
  const match = query.window ? WINDOW.exec(query.window) : null;
  const span = match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : METRICS_DEFAULTS.windowMs;
  // Without an end, a window starting in the future ends where it starts: empty, nothing to count yet.
  const until = query.until ? new Date(query.until) : query.since ? new Date(Math.max(now.getTime(), Date.parse(query.since))) : now;
  const since = query.since ? new Date(query.since) : new Date(until.getTime() - span);
  const length = until.getTime() - since.getTime();
  if (length < 0 || (length === 0 && query.until))
    return invalid(
      'since',
      "The window must end after it starts: 'since' must be before 'until'.",
      `before ${until.toISOString()}`,
      since.toISOString(),
    );
  if (since.getTime() < FIRST_INSTANT) {
    return invalid(
      'window',
      `The window must start on or after ${new Date(FIRST_INSTANT).toISOString()}: make it shorter, or move 'until' later.`,
      `a start on or after ${new Date(FIRST_INSTANT).toISOString()}`,
      since.toISOString(),
    );
  }
  if (length > METRICS_DEFAULTS.maxWindowMs) {
    return invalid(
      query.window ? 'window' : 'since',
      'The window may span at most 400 days.',
      'at most 400 days',
      `${Math.round(length / 86_400_000)} days`,
    );
  }
  const bucketSeconds = BUCKET_SECONDS.find((width) => length / (width * 1000) <= METRICS_DEFAULTS.maxBuckets) ?? BUCKET_SECONDS.at(-1)!;
  return { since, until, bucketSeconds };
}

/**
 * Reads the project's metrics over `window`, in one round trip: one `tool`'s when given, and only
 * those of `readable` when given (a credential limited to some toolsets), totals included.
 */
export async function readMetrics(
  db: Database,
  projectId: string,
  window: MetricsWindow,
  tool?: string,
  readable?: readonly string[],
): Promise<Outcome<Metrics>> {
  const statements = metricsStatements(projectId, window, tool, readable);
  const [aggregates, failures, refusals, series, toolSeries] = await db.batch([
    db.execute(statements[0]),
    db.execute(statements[1]),
    db.execute(statements[2]),
    db.execute(statements[3]),
    db.execute(statements[4]),
  ]);
  const byTool = figuresByTool(aggregates.rows as AggregateRow[], failures.rows as CodeCount[], refusals.rows as CodeCount[]);
  const totals = byTool.get(null)!;
  const starts = bucketStarts(window);
  const tools = metricsPerTool(byTool, toolSeries.rows as (SeriesRow & { tool: string })[], starts);
  const points = new Map((series.rows as SeriesRow[]).map((row) => [row.start, row]));
  const buckets: Metrics['series'] = starts.map((key) => {
    const point = points.get(key);
    return {
      start: key,
      calls: point?.calls ?? 0,
      failures: point?.failures ?? 0,
      duration_ms_p50: round(point?.percentiles?.[0]),
      duration_ms_p95: round(point?.percentiles?.[1]),
    };
  });

  const data: Metrics = {
    window: { since: window.since.toISOString(), until: window.until.toISOString(), bucket_seconds: window.bucketSeconds },
    totals,
    tools,
    series: buckets,
  };
  const rate = totals.success_rate === null ? '' : ` (${(totals.success_rate * 100).toFixed(1)} % succeeded)`;
  return ok(
    data,
    `${plural(totals.calls, 'execution')} of ${plural(tools.length, 'tool')} between ${data.window.since} and ${data.window.until}${rate}.`,
  );
}

/** A count of calls by tool and error code, as the failures' and refusals' statements read it. */
type CodeCount = { tool: string; code: string; count: number };

/** Each tool's figures (null: all tools), with its failures and refusals counted by code. */
function figuresByTool(aggregates: AggregateRow[], failures: CodeCount[], refusals: CodeCount[]): Map<string | null, Figures> {
  const byTool = new Map<string | null, Figures>();
  for (const row of aggregates) byTool.set(row.is_total ? null : row.tool, figuresOf(row));
  const figuresFor = (name: string | null) => {
    let found = byTool.get(name);
    if (!found) byTool.set(name, (found = figuresOf(undefined)));
    return found;
  };
  figuresFor(null);
  for (const row of failures) {
    for (const target of [figuresFor(row.tool), figuresFor(null)])
      target.failures_by_code[row.code] = (target.failures_by_code[row.code] ?? 0) + row.count;
  }
  for (const row of refusals) {
    const counter = REFUSAL_COUNTERS[row.code];
    if (!counter) continue;
    for (const target of [figuresFor(row.tool), figuresFor(null)]) target[counter] += row.count;
  }
  return byTool;
}

/** The start of every bucket of `window`, oldest first. */
function bucketStarts(window: MetricsWindow): string[] {
  const starts: string[] = [];
  const width = window.bucketSeconds * 1000;
  for (let start = window.since.getTime(); start < window.until.getTime(); start += width) starts.push(new Date(start).toISOString());
  return starts;
}

/** Each tool's metrics with its calls and failures per bucket, busiest first. */
function metricsPerTool(
  byTool: Map<string | null, Figures>,
  toolSeries: (SeriesRow & { tool: string })[],
  starts: string[],
): ToolMetrics[] {
  const perTool = new Map<string, Map<string, { calls: number; failures: number }>>();
  for (const row of toolSeries) {
    let points = perTool.get(row.tool);
    if (!points) perTool.set(row.tool, (points = new Map()));
    points.set(row.start, row);
  }
  const tools: ToolMetrics[] = [];
  for (const [name, f] of byTool) {
    if (name === null) continue;
    const points = perTool.get(name);
    const at = (start: string) => points?.get(start);
    tools.push({
      tool: name,
      ...f,
      series: { calls: starts.map((start) => at(start)?.calls ?? 0), failures: starts.map((start) => at(start)?.failures ?? 0) },
    });
  }
  return tools.sort((a, b) => b.calls - a.calls || a.tool.localeCompare(b.tool));
}

/**
 * The five statements behind {@link readMetrics}: aggregates per tool and for all tools (ROLLUP),
 * failures by code, refusals by code, the series, and each tool's calls and failures per bucket.
 */
function metricsStatements(
  projectId: string,
  { since, until, bucketSeconds }: MetricsWindow,
  tool?: string,
  readable?: readonly string[],
): [SQL, SQL, SQL, SQL, SQL] {
  const inWindow = sql`project_id = ${projectId} and created_at >= ${since.toISOString()}::timestamptz and created_at < ${until.toISOString()}::timestamptz${
    tool === undefined ? sql`` : sql` and tool = ${tool}`
  }${readable === undefined ? sql`` : sql` and ${inArray(sql.identifier('tool'), [...readable])}`}`;
  const bucketStart = sql`to_char(date_bin(make_interval(secs => ${bucketSeconds}), created_at, ${since.toISOString()}::timestamptz) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  return [
    sql`select tool, grouping(tool) = 1 as is_total, count(*)::int as calls,
        (count(*) filter (where status = 'success'))::int as successes,
        avg(duration_ms) as duration_avg,
        percentile_cont(array[0.5, 0.95, 0.99]) within group (order by duration_ms) as duration_percentiles,
        max(duration_ms) as duration_max,
        avg(queued_ms) as queued_avg,
        percentile_cont(array[0.5, 0.95]) within group (order by queued_ms) as queued_percentiles,
        (count(*) filter (where attempts > 1))::int as retried,
        (count(*) filter (where performance_warning))::int as warnings
      from tool_executions where ${inWindow}
      group by rollup (tool)`,
    sql`select tool, error_code as code, count(*)::int as count
      from tool_executions where ${inWindow} and status = 'error'
      group by tool, error_code`,
    sql`select tool, code, count(*)::int as count
      from tool_refusals where ${inWindow}
      group by tool, code`,
    sql`select ${bucketStart} as start,
        count(*)::int as calls,
        (count(*) filter (where status = 'error'))::int as failures,
        percentile_cont(array[0.5, 0.95]) within group (order by duration_ms) as percentiles
      from tool_executions where ${inWindow}
      group by 1 order by 1`,
    sql`select tool, ${bucketStart} as start,
        count(*)::int as calls,
        (count(*) filter (where status = 'error'))::int as failures
      from tool_executions where ${inWindow}
      group by tool, 2`,
  ];
}

type AggregateRow = {
  tool: string | null;
  is_total: boolean;
  calls: number;
  successes: number;
  duration_avg: number | null;
  /** p50, p95, p99: each array of percentiles costs one sort. */
  duration_percentiles: number[] | null;
  duration_max: number | null;
  queued_avg: number | null;
  queued_percentiles: number[] | null;
  retried: number;
  warnings: number;
};

type SeriesRow = { start: string; calls: number; failures: number; percentiles: number[] | null };

const REFUSAL_COUNTERS: Record<string, 'validation_refusals' | 'rate_limit_refusals' | 'busy_refusals'> = {
  VALIDATION_ERROR: 'validation_refusals',
  PAYLOAD_TOO_LARGE: 'validation_refusals',
  RATE_LIMITED: 'rate_limit_refusals',
  BUSY: 'busy_refusals',
};

function figuresOf(row: AggregateRow | undefined): Figures {
  const calls = row?.calls ?? 0;
  const successes = row?.successes ?? 0;
  return {
    calls,
    successes,
    failures: calls - successes,
    success_rate: calls === 0 ? null : Math.round((successes / calls) * 10_000) / 10_000,
    failures_by_code: {},
    duration_ms: {
      avg: round(row?.duration_avg),
      p50: round(row?.duration_percentiles?.[0]),
      p95: round(row?.duration_percentiles?.[1]),
      p99: round(row?.duration_percentiles?.[2]),
      max: round(row?.duration_max),
    },
    queued_ms: { avg: round(row?.queued_avg), p50: round(row?.queued_percentiles?.[0]), p95: round(row?.queued_percentiles?.[1]) },
    retried_calls: row?.retried ?? 0,
    performance_warnings: row?.warnings ?? 0,
    validation_refusals: 0,
    rate_limit_refusals: 0,
    busy_refusals: 0,
  };
}

/** A figure of the database (a number, a numeric's text, or null), rounded as answers show figures. */
function round(value: number | null | undefined): number | null {
  return value === null || value === undefined ? null : roundToHundredths(Number(value));
}

function invalid(field: string, message: string, expected: string, received: string): Failure {
  return fail('VALIDATION_ERROR', message, {
    hint: HINT,
    details: { fields: [{ field, code: 'invalid_window', message, expected, received }] },
  });
}
