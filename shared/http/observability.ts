/**
 * The observability routes, on the gateway: `GET /executions`, `GET /executions/:trace_id`,
 * `GET /metrics` (JSON or Prometheus text) and `GET /dashboard` (the page that reads them).
 * The JSON routes are authenticated like the tools (`Authorization: Bearer <key>`), scoped to the
 * key's project, and answer with the envelope; they execute no tool, so `meta.attempts` is 0.
 */
import { Hono } from 'hono';
import { fail, type Failure } from '../core/contract.ts';
import type { Env } from '../runtime/env.ts';
import { EXECUTIONS_NUMERIC_PARAMETERS, executionsQuery, getExecution, listExecutions, normalizeTraceId } from '../observability/executions.ts';
import { metricsQuery, readMetrics, resolveWindow } from '../observability/metrics.ts';
import { PROMETHEUS_CONTENT_TYPE, prometheusText } from '../observability/prometheus.ts';
import { dashboardPage } from './dashboard.ts';
import { authenticated, readQuery } from './read-route.ts';

const EXECUTIONS_HINT = 'Example of a valid call: GET /executions?status=failure&tool=log-mood&limit=20';
const METRICS_HINT = 'Example of a valid call: GET /metrics?window=24h (or ?format=prometheus for scraping)';

/** The observability routes, mounted by the gateway (shared/http/app.ts). */
export function observabilityRoutes() {
  return new Hono<{ Bindings: Env }>()
    .get('/executions', (c) =>
      authenticated(c, 'executions', async ({ db, project }) => {
        const query = readQuery(c.req.url, executionsQuery, EXECUTIONS_NUMERIC_PARAMETERS, EXECUTIONS_HINT);
        return query.ok ? listExecutions(db, project.id, query.value) : query;
      }),
    )
    .get('/executions/:trace_id', (c) =>
      authenticated(c, 'executions', async ({ db, project }) => {
        const raw = c.req.param('trace_id');
        const traceId = normalizeTraceId(raw);
        if (!traceId) return invalidTraceId(raw);
        return getExecution(db, project.id, traceId);
      }),
    )
    .get('/metrics', (c) =>
      authenticated(c, 'metrics', async ({ db, project }) => {
        const query = readQuery(c.req.url, metricsQuery, [], METRICS_HINT);
        if (!query.ok) return query;
        const window = resolveWindow(query.value);
        if ('ok' in window) return window;
        const metrics = await readMetrics(db, project.id, window, query.value.tool);
        if (!metrics.ok || query.value.format !== 'prometheus') return metrics;
        return new Response(prometheusText(metrics.data), { headers: { 'content-type': PROMETHEUS_CONTENT_TYPE, 'cache-control': 'no-store' } });
      }),
    )
    .get('/dashboard', () => dashboardPage());
}

function invalidTraceId(received: string): Failure {
  const message = `'trace_id' must be the meta.trace_id of an answer (a UUID) or the same 32 hex digits without dashes, but received '${received.slice(0, 60)}'.`;
  return fail('VALIDATION_ERROR', message, {
    hint: 'Example of a valid call: GET /executions/5f0c2b1e-8d4a-4e7b-9c2f-1a2b3c4d5e6f',
    details: { fields: [{ field: 'trace_id', code: 'invalid_format', message, expected: 'a UUID', received: `'${received.slice(0, 60)}'` }] },
  });
}
