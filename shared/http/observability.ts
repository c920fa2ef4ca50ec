/**
 * The observability routes, on every worker: `GET /executions`, `GET /executions/:trace_id`,
 * `GET /metrics` (JSON or Prometheus text) and `GET /dashboard` (the page that reads them).
 * The JSON routes are authenticated like the tools (`Authorization: Bearer <key>`), scoped to the
 * key's project, and answer with the envelope; they execute no tool, so `meta.attempts` is 0.
 */
import { Hono, type Context } from 'hono';
import type { z } from 'zod';
import { fail, metaWithoutExecution, type Failure, type Outcome } from '../core/contract.ts';
import { validateInput, type Parsed } from '../core/validation.ts';
import { databaseFailure, type Database } from '../runtime/db.ts';
import type { Env } from '../runtime/env.ts';
import { authorize, credentialsOf, respond, unexpected } from '../runtime/pipeline.ts';
import type { Caller } from '../runtime/auth.ts';
import { EXECUTIONS_NUMERIC_PARAMETERS, executionsQuery, getExecution, listExecutions, normalizeTraceId } from '../observability/executions.ts';
import { log } from '../observability/log.ts';
import { metricsQuery, readMetrics, resolveWindow } from '../observability/metrics.ts';
import { PROMETHEUS_CONTENT_TYPE, prometheusText } from '../observability/prometheus.ts';
import { dashboardPage } from './dashboard.ts';

const EXECUTIONS_HINT = 'Example of a valid call: GET /executions?status=failure&tool=log-mood&limit=20';
const METRICS_HINT = 'Example of a valid call: GET /metrics?window=24h (or ?format=prometheus for scraping)';

/** The observability routes, mounted by every worker (shared/http/app.ts). */
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

type Authenticated = Caller & { db: Database };

/**
 * Answers a read route for an authenticated caller: `run` gets the caller's project and database
 * client and returns an outcome (answered as the envelope) or a finished response. Database
 * failures become DATABASE_ERROR, anything else UNKNOWN_ERROR with a trace id; never throws.
 */
async function authenticated(c: Context<{ Bindings: Env }>, route: string, run: (caller: Authenticated) => Promise<Outcome<unknown> | Response>): Promise<Response> {
  const traceId = crypto.randomUUID();
  const startedAt = performance.now();
  let answer: Outcome<unknown> | Response;
  try {
    const caller = await authorize(credentialsOf(c.req.raw), { env: c.env, waitUntil: (work) => c.executionCtx.waitUntil(work) }, { traceId });
    if (!caller.ok) answer = caller;
    else {
      // A cached key is re-checked alongside the read: a key revoked meanwhile reads nothing.
      const [result, revoked] = await Promise.all([run(caller), caller.confirmed]);
      answer = revoked ?? result;
    }
  } catch (error) {
    const failure = databaseFailure(error);
    if (!failure) log('error', 'read_route_failed', { trace_id: traceId, route, error: String(error) });
    answer = failure ?? unexpected(error, traceId);
  }
  if (answer instanceof Response) return answer;
  const response = respond(answer, { ...metaWithoutExecution(route, traceId), duration_ms: Math.round((performance.now() - startedAt) * 100) / 100 });
  response.headers.set('cache-control', 'no-store');
  return response;
}

/**
 * Reads a URL's query string into an object and validates it like a tool input: unknown
 * parameters are refused by name; `numeric` parameters that look like numbers become numbers
 * (others stay strings, and the schema says what was expected); a repeated parameter arrives as a
 * list and is refused.
 */
function readQuery<S extends z.ZodType>(url: string, schema: S, numeric: readonly string[], hint: string): Parsed<z.output<S>> {
  const params = new URL(url).searchParams;
  const query: Record<string, unknown> = {};
  for (const name of new Set(params.keys())) {
    const values = params.getAll(name).map((value) => (numeric.includes(name) && NUMBER.test(value.trim()) ? Number(value) : value));
    query[name] = values.length === 1 ? values[0] : values;
  }
  return validateInput(schema, query, hint);
}

const NUMBER = /^-?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;

function invalidTraceId(received: string): Failure {
  const message = `'trace_id' must be the meta.trace_id of an answer (a UUID) or the same 32 hex digits without dashes, but received '${received.slice(0, 60)}'.`;
  return fail('VALIDATION_ERROR', message, {
    hint: 'Example of a valid call: GET /executions/5f0c2b1e-8d4a-4e7b-9c2f-1a2b3c4d5e6f',
    details: { fields: [{ field: 'trace_id', code: 'invalid_format', message, expected: 'a UUID', received: `'${received.slice(0, 60)}'` }] },
  });
}
