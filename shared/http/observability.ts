/**
 * The observability routes, on the gateway: `GET /executions`, `GET /executions/:trace_id`,
 * `GET /refusals`, `GET /metrics` (JSON or Prometheus text) and `GET /dashboard` (the page that reads them).
 * The JSON routes are authenticated like the tools (`Authorization: Bearer <key>`), scoped to the
 * key's project, and answer with the envelope; they execute no tool, so `meta.attempts` is 0.
 */
import { Hono } from 'hono/tiny';
import { fail, type Failure } from '../core/contract.ts';
import { log } from '../observability/log.ts';
import type { Parsed } from '../core/body.ts';
import type { CounterTotals } from '../observability/counters.ts';
import type { Env } from '../runtime/env.ts';
import { EXECUTIONS_NUMERIC_PARAMETERS, executionsQuery, getExecution, listExecutions, normalizeTraceId } from '../observability/executions.ts';
import { metricsQuery, readMetrics, resolveWindow, type MetricsQuery } from '../observability/metrics.ts';
import { readCounters } from '../observability/counters.ts';
import { listRefusals, REFUSALS_NUMERIC_PARAMETERS, refusalsQuery } from '../observability/refusals.ts';
import { isMetricsToken, PROMETHEUS_CONTENT_TYPE, prometheusText } from '../observability/prometheus.ts';
import { createDb, databaseFailure } from '../runtime/db.ts';
import { unexpected } from '../runtime/execute.ts';
import { answer } from './base.ts';
import { dashboardPage } from './dashboard/page.ts';
import { authenticated, readQuery, type ReadRouteOptions } from './read-route.ts';

const EXECUTIONS_HINT = 'Example of a valid call: GET /executions?status=failure&tool=log-mood&limit=20';
const REFUSALS_HINT = 'Example of a valid call: GET /refusals?code=VALIDATION_ERROR&limit=20';
const METRICS_HINT = 'Example of a valid call: GET /metrics?window=24h (or ?format=prometheus for scraping)';

/** The observability routes, mounted by the gateway (shared/http/app.ts); `tools` are the ids of the tools it serves. */
export function observabilityRoutes(tools: readonly string[], options: ReadRouteOptions = {}) {
  return new Hono<{ Bindings: Env }>()
    .get('/executions', (c) =>
      authenticated(c, 'executions', async ({ db, project }) => {
        const query = readQuery(c.req.url, executionsQuery, EXECUTIONS_NUMERIC_PARAMETERS, EXECUTIONS_HINT);
        return query.ok ? listExecutions(db, project.id, query.value) : query;
      }, options),
    )
    .get('/executions/:trace_id', (c) =>
      authenticated(c, 'executions', async ({ db, project }) => {
        const raw = c.req.param('trace_id');
        const traceId = normalizeTraceId(raw);
        if (!traceId) return invalidTraceId(raw);
        return getExecution(db, project.id, traceId);
      }, options),
    )
    .get('/refusals', (c) =>
      authenticated(c, 'refusals', async ({ db, project }) => {
        const query = readQuery(c.req.url, refusalsQuery, REFUSALS_NUMERIC_PARAMETERS, REFUSALS_HINT);
        return query.ok ? listRefusals(db, project.id, query.value) : query;
      }, options),
    )
    .get('/metrics', async (c) => {
      if (await isMetricsToken(c.req.header('authorization'), c.env)) return answerScrape(c.req.url, c.env, tools);
      return authenticated(c, 'metrics', async ({ db, project }) => {
        const query = readMetricsQuery(c.req.url);
        if (!query.ok) return query;
        if (query.value.format === 'prometheus') return exposition(await readCounters(db, project.id), tools, query.value.tool);
        const window = resolveWindow(query.value);
        if ('ok' in window) return window;
        return readMetrics(db, project.id, window, query.value.tool);
      }, options);
    })
    .get('/dashboard', () => dashboardPage());
}

function invalidTraceId(received: string): Failure {
  const message = `'trace_id' must be the meta.trace_id of an answer (a UUID) or the same 32 hex digits without dashes, but received '${received.slice(0, 60)}'.`;
  return fail('VALIDATION_ERROR', message, {
    hint: 'Example of a valid call: GET /executions/5f0c2b1e-8d4a-4e7b-9c2f-1a2b3c4d5e6f',
    details: { fields: [{ field: 'trace_id', code: 'invalid_format', message, expected: 'a UUID', received: `'${received.slice(0, 60)}'` }] },
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
    details: { fields: [{ field: windowed, code: 'not_with_prometheus', message, expected: 'absent with format=prometheus', received: String(query.value[windowed]) }] },
  });
}

/** The counters as Prometheus text, one tool's only when `tool` is given. */
function exposition(totals: CounterTotals, tools: readonly string[], tool?: string): Response {
  const shown = tool === undefined ? totals : { projects: totals.projects, rows: totals.rows.filter((row) => row.tool === tool) };
  return new Response(prometheusText(shown, tool === undefined ? tools : [tool]), {
    headers: { 'content-type': PROMETHEUS_CONTENT_TYPE, 'cache-control': 'no-store' },
  });
}

/** A scrape with `METRICS_TOKEN`: every project's counters, in the Prometheus format only. */
async function answerScrape(url: string, env: Env, tools: readonly string[]): Promise<Response> {
  const query = readMetricsQuery(url);
  if (query.ok && query.value.format !== 'prometheus') {
    return answer(
      fail('VALIDATION_ERROR', "METRICS_TOKEN reads the Prometheus format only (every project's counters): add format=prometheus. The JSON figures are per project: read them with the project's key.", {
        hint: 'Example of a valid call: GET /metrics?format=prometheus with Authorization: Bearer <METRICS_TOKEN>',
      }),
      'metrics',
    );
  }
  if (!query.ok) return answer(query, 'metrics');
  const traceId = crypto.randomUUID();
  if (!env.DATABASE_URL) return answer(fail('CONFIG_ERROR', 'The service has no database configured (DATABASE_URL), so it has no counters to answer.'), 'metrics', traceId);
  try {
    return exposition(await readCounters(createDb(env.DATABASE_URL)), tools, query.value.tool);
  } catch (error) {
    const failure = databaseFailure(error);
    if (!failure) log('error', 'read_route_failed', { trace_id: traceId, route: 'metrics', error: String(error) });
    return answer(failure ?? unexpected(error, traceId), 'metrics', traceId);
  }
}
