/**
 * The observability routes, on the gateway: `GET /executions`, `GET /executions/:trace_id`,
 * `GET /refusals`, `GET /metrics` (JSON or Prometheus text) and `GET /dashboard` (the page that reads them).
 * The JSON routes are authenticated like the tools (`Authorization: Bearer <key>`), scoped to the
 * key's project (and, for a credential limited to some toolsets, to those toolsets' tools), and
 * answer with the envelope; they execute no tool, so `meta.attempts` is 0.
 */
import { Hono } from 'hono/tiny';
import { fail, type Failure } from '../core/contract.ts';
import type { AnyTool } from '../core/tool.ts';
import type { Caller } from '../auth/caller.ts';
import { log } from '../core/log.ts';
import type { Parsed } from '../core/body.ts';
import type { CounterTotals } from '../observability/counters.ts';
import type { Env } from '../runtime/env.ts';
import {
  EXECUTIONS_NUMERIC_PARAMETERS,
  executionsQuery,
  getExecution,
  listExecutions,
  normalizeTraceId,
} from '../observability/executions.ts';
import { metricsQuery, readMetrics, resolveWindow, type MetricsQuery } from '../observability/metrics.ts';
import { readCounters } from '../observability/counters.ts';
import { listRefusals, REFUSALS_NUMERIC_PARAMETERS, refusalsQuery } from '../observability/refusals.ts';
import { isMetricsToken } from '../auth/metrics-token.ts';
import { PROMETHEUS_CONTENT_TYPE, prometheusText } from '../observability/prometheus.ts';
import { createDb } from '../runtime/db.ts';
import { databaseFailure } from '../core/database.ts';
import { unexpected } from '../runtime/execute.ts';
import { answer } from './base.ts';
import { dashboardPage } from './dashboard/page.ts';
import { authenticated, readQuery, type ReadRouteOptions } from './read-route.ts';

const EXECUTIONS_HINT = 'Example of a valid call: GET /executions?status=failure&tool=log-mood&limit=20';
const REFUSALS_HINT = 'Example of a valid call: GET /refusals?code=VALIDATION_ERROR&limit=20';
const METRICS_HINT = 'Example of a valid call: GET /metrics?window=24h (or ?format=prometheus for scraping)';

/** What the observability routes know of a tool served: its id and toolset. */
export type ServedTool = Pick<AnyTool, 'id' | 'toolset'>;

/** The observability routes, mounted by the gateway (shared/http/app.ts), for the `tools` it serves. */
export function observabilityRoutes(tools: readonly ServedTool[], options: ReadRouteOptions) {
  const ids = tools.map((tool) => tool.id);
  return new Hono<{ Bindings: Env }>()
    .get('/executions', (c) =>
      authenticated(
        c,
        'executions',
        async (db, caller) => {
          const query = readQuery(c.req.url, executionsQuery, EXECUTIONS_NUMERIC_PARAMETERS, EXECUTIONS_HINT);
          if (!query.ok) return query;
          return (
            deniedRecords(caller, tools, query.value.tool) ??
            listExecutions(db, caller.project.id, query.value, readableTools(caller, tools))
          );
        },
        options,
      ),
    )
    .get('/executions/:trace_id', (c) =>
      authenticated(
        c,
        'executions',
        async (db, caller) => {
          const raw = c.req.param('trace_id');
          const traceId = normalizeTraceId(raw);
          if (!traceId) return invalidTraceId(raw);
          return getExecution(db, caller.project.id, traceId, readableTools(caller, tools));
        },
        options,
      ),
    )
    .get('/refusals', (c) =>
      authenticated(
        c,
        'refusals',
        async (db, caller) => {
          const query = readQuery(c.req.url, refusalsQuery, REFUSALS_NUMERIC_PARAMETERS, REFUSALS_HINT);
          if (!query.ok) return query;
          return (
            deniedRecords(caller, tools, query.value.tool) ?? listRefusals(db, caller.project.id, query.value, readableTools(caller, tools))
          );
        },
        options,
      ),
    )
    .get('/metrics', async (c) => {
      if (await isMetricsToken(c.req.header('authorization'), c.env.METRICS_TOKEN)) return answerScrape(c.req.url, c.env, ids);
      return authenticated(
        c,
        'metrics',
        async (db, caller) => {
          const query = readMetricsQuery(c.req.url);
          if (!query.ok) return query;
          const denied = deniedRecords(caller, tools, query.value.tool);
          if (denied) return denied;
          const readable = readableTools(caller, tools);
          if (query.value.format === 'prometheus')
            return exposition(await readCounters(db, caller.project.id), ids, query.value.tool, readable);
          const window = resolveWindow(query.value);
          if ('ok' in window) return window;
          return readMetrics(db, caller.project.id, window, query.value.tool, readable);
        },
        options,
      );
    })
    .get('/dashboard', () => dashboardPage());
}

/**
 * The ids of the tools whose records `caller` may read: undefined (every tool's, also those of
 * tools no longer served) unless its credential is limited to some toolsets, and then the served
 * tools of those toolsets.
 */
function readableTools(caller: Caller, tools: readonly ServedTool[]): readonly string[] | undefined {
  const granted = caller.toolsets;
  return granted && tools.filter((tool) => granted.includes(tool.toolset)).map((tool) => tool.id);
}

/** PERMISSION_DENIED when the query names (`?tool=`) a served tool outside the credential's toolsets. */
function deniedRecords(caller: Caller, tools: readonly ServedTool[], toolId: string | undefined): Failure | undefined {
  const tool = tools.find((served) => served.id === toolId);
  const granted = caller.toolsets;
  if (!tool || !granted || granted.includes(tool.toolset)) return undefined;
  return fail(
    'PERMISSION_DENIED',
    `The credential may read the records of the toolsets ${granted.join(', ')} only, and '${tool.id}' belongs to ${tool.toolset}.`,
    {
      hint: `Ask for a tool of ${granted.join(', ')}, or leave out 'tool' to read all of them; another toolset's records need a credential granted it.`,
      details: { reason: 'toolset_not_granted', toolsets: [...granted], tool_toolset: tool.toolset },
    },
  );
}

function invalidTraceId(received: string): Failure {
  const message = `'trace_id' must be the meta.trace_id of an answer (a UUID) or the same 32 hex digits without dashes, but received '${received.slice(0, 60)}'.`;
  return fail('VALIDATION_ERROR', message, {
    hint: 'Example of a valid call: GET /executions/5f0c2b1e-8d4a-4e7b-9c2f-1a2b3c4d5e6f',
    details: {
      fields: [{ field: 'trace_id', code: 'invalid_format', message, expected: 'a UUID', received: `'${received.slice(0, 60)}'` }],
    },
  });
}

/**
 * The query of `GET /metrics`, with what the Prometheus format refuses: its counters run from the
 * first call, so a window means nothing to them (`rate()` and `increase()` take the window).
 */
function readMetricsQuery(url: string): Parsed<MetricsQuery> {
  const query = readQuery(url, metricsQuery, [], METRICS_HINT);
  if (!query.ok || query.value.format !== 'prometheus') return query;
  const windowed = (['window', 'since', 'until'] as const).find((name) => query.value[name] !== undefined);
  if (!windowed) return query;
  const message = `Query parameter '${windowed}' applies to the JSON figures only: format=prometheus answers cumulative counters, from which Prometheus computes any window (rate(), increase()).`;
  return fail('VALIDATION_ERROR', message, {
    hint: 'Example of a valid call: GET /metrics?format=prometheus (scrape it), or GET /metrics?window=15m for the JSON figures.',
    details: {
      fields: [
        {
          field: windowed,
          code: 'not_with_prometheus',
          message,
          expected: 'absent with format=prometheus',
          received: String(query.value[windowed]),
        },
      ],
    },
  });
}

/**
 * The counters as Prometheus text, for every tool served (`tools`) and every tool counted: one
 * tool's only when `tool` is given, and only those of `readable` when given.
 */
function exposition(totals: CounterTotals, tools: readonly string[], tool?: string, readable?: readonly string[]): Response {
  const shown = (name: string) => (tool === undefined || name === tool) && (!readable || readable.includes(name));
  return new Response(
    prometheusText(
      { projects: totals.projects, rows: totals.rows.filter((row) => shown(row.tool)) },
      (tool === undefined ? tools : [tool]).filter(shown),
    ),
    {
      headers: { 'content-type': PROMETHEUS_CONTENT_TYPE, 'cache-control': 'no-store' },
    },
  );
}

/** A scrape with `METRICS_TOKEN`: every project's counters, in the Prometheus format only. */
async function answerScrape(url: string, env: Env, tools: readonly string[]): Promise<Response> {
  const query = readMetricsQuery(url);
  if (query.ok && query.value.format !== 'prometheus') {
    return answer(
      fail(
        'VALIDATION_ERROR',
        "METRICS_TOKEN reads the Prometheus format only (every project's counters): add format=prometheus. The JSON figures are per project: read them with the project's key.",
        {
          hint: 'Example of a valid call: GET /metrics?format=prometheus with Authorization: Bearer <METRICS_TOKEN>',
        },
      ),
      'metrics',
    );
  }
  if (!query.ok) return answer(query, 'metrics');
  const traceId = crypto.randomUUID();
  if (!env.DATABASE_URL)
    return answer(
      fail('CONFIG_ERROR', 'The service has no database configured (DATABASE_URL), so it has no counters to answer.'),
      'metrics',
      traceId,
    );
  try {
    return exposition(await readCounters(createDb(env.DATABASE_URL)), tools, query.value.tool);
  } catch (error) {
    const failure = databaseFailure(error);
    if (!failure) log('error', 'read_route_failed', { trace_id: traceId, route: 'metrics', error: String(error) });
    return answer(failure ?? unexpected(error, traceId), 'metrics', traceId);
  }
}
