/**
 * What every worker serves, the gateway and a tool's own worker alike: liveness and readiness, the
 * envelope for a route that does not exist, and for anything unexpected. Kept apart from the
 * gateway's surfaces (MCP, OpenAPI, the catalog, observability) so that a tool's own worker
 * bundles none of them.
 *
 * Every app of `shared/http` is Hono's `hono/tiny` preset (its PatternRouter alone): a worker
 * serves a few dozen routes, which a linear match answers in microseconds, while the default
 * preset bundles two more routers (RegExpRouter and TrieRouter, about 2 KiB gzip in every worker).
 */
import type { Context } from 'hono';
import { Hono } from 'hono/tiny';
import { envelope, fail, metaWithoutExecution, ok, retryAfterMs, statusOf, type Meta, type Outcome } from '../core/contract.ts';
import type { Env, RequestScope } from '../runtime/env.ts';
import { log } from '../core/log.ts';
import { unexpected } from '../runtime/execute.ts';
import { checkReadiness } from '../runtime/readiness.ts';
import { closestNames, didYouMean } from '../core/suggest.ts';

/** How this service names itself to MCP clients and in the OpenAPI document. */
export const SERVER_INFO = { name: 'edge-tools', version: '0.1.0' };

/** Options of {@link baseApp}. */
export interface BaseAppOptions {
  /** How many tools the worker serves (said by `GET /health`). */
  tools: number;
  /** The hint of a NOT_FOUND answer: the worker's routes. */
  routesHint: string;
  /**
   * The id of the one tool a tool's own worker runs at `POST /`: a path that names it, or nearly
   * (`/tools/<id>`, `/<id>`, `/tools/list_plans`), is pointed there; a path naming another tool is
   * pointed nowhere on this worker (the hint says the gateway serves it), never to a record route
   * whose parameter a tool's name would fill (`GET /tasks/list-plans`).
   */
  tool?: string;
}

/**
 * A Hono app serving `GET /health` (the worker is up; no key, no I/O) and `GET /health/ready`
 * (its database and Redis answer; 503 when one does not), answering unknown routes with
 * NOT_FOUND and unexpected errors with UNKNOWN_ERROR, both as the envelope. Workers chain their
 * own routes on it.
 */
export function baseApp({ tools, routesHint, tool }: BaseAppOptions) {
  const app = new Hono<{ Bindings: Env }>()
    .get('/health', () => answer(ok({ status: 'ok', tools }, 'The service is up.'), 'health'))
    .get('/health/ready', async (c) => answer(await checkReadiness(c.env), 'health'));
  app.notFound((c) => {
    const path = new URL(c.req.url).pathname;
    const suggestions = tool === undefined ? nearestRoutes(app.routes, path) : toolWorkerRoutes(app.routes, path, tool);
    return answer(
      fail('NOT_FOUND', `There is no route ${c.req.method} ${path.slice(0, 200)}.${didYouMean(suggestions)}`, {
        hint: routesHint,
        details: { entity_type: 'route', ...(suggestions.length && { suggestions }) },
      }),
      'gateway',
    );
  });
  app.onError((error, c) => {
    const traceId = crypto.randomUUID();
    log('error', 'unhandled_error', { trace_id: traceId, path: new URL(c.req.url).pathname, error: String(error) });
    return answer(unexpected(error, traceId), 'gateway', traceId);
  });
  return app;
}

/**
 * Answers 405 METHOD_NOT_ALLOWED, with an `Allow` header and the envelope, on every path `app`
 * routes for other methods only (`GET /tools/log-mood`, `POST /health`, ...). Registered after
 * the routes, so it covers every route registered before it. Paths routed for every method (such
 * as `/mcp`, whose handler answers 405 itself) are left alone. `routesHint` names the worker's routes.
 */
export function refuseOtherMethods<App extends Hono<{ Bindings: Env }>>(app: App, routesHint: string): App {
  const allowed = new Map<string, Set<string>>();
  for (const { path, method } of app.routes) {
    if (method === 'ALL') continue;
    const methods = allowed.get(path) ?? new Set<string>();
    allowed.set(path, methods.add(method));
    // Hono answers HEAD with the GET route.
    if (method === 'GET') methods.add('HEAD');
  }
  for (const [path, methods] of allowed) {
    const allow = [...methods].join(', ');
    app.all(path, (c) => {
      const response = answer(
        fail('METHOD_NOT_ALLOWED', `${c.req.method} is not allowed on ${new URL(c.req.url).pathname}; it answers ${allow}.`, {
          hint: routesHint,
          details: { allowed_methods: [...methods] },
        }),
        'gateway',
      );
      response.headers.set('allow', allow);
      return response;
    });
  }
  return app;
}

/** What a tool-like name looks like: words joined by `-` or `_`, or camelCase (`list-plans`, `getDueFlashcards`). */
const TOOL_LIKE = /^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+$|^[a-z][a-z0-9]*[A-Z]/;

/**
 * The suggestions of a tool's own worker for `path`: `POST /` when a segment names its `tool` (or
 * nearly); none when one names another tool (only the gateway serves it); else the nearest routes.
 */
function toolWorkerRoutes(routes: readonly { method: string; path: string }[], path: string, tool: string): string[] {
  const segments = path.split('/').filter(Boolean);
  if (segments.some((segment) => closestNames(segment, [tool]).length > 0)) return ['POST /'];
  const literals = new Set(routes.flatMap((route) => route.path.split('/')));
  if (segments.some((segment) => TOOL_LIKE.test(segment) && !literals.has(segment))) return [];
  return nearestRoutes(routes, path);
}

/**
 * The routes nearest to `path` ("GET /executions" for `/execution`), their parameters filled from
 * the path (`/tool/list-plans` is nearest to "POST /tools/list-plans"). Middleware (`*`) is not a route.
 */
function nearestRoutes(routes: readonly { method: string; path: string }[], path: string): string[] {
  const segments = path.split('/');
  const methods = new Map<string, Set<string>>();
  for (const route of routes) {
    const pattern = route.path.split('/');
    if (route.path.includes('*') || pattern.length !== segments.length) continue;
    const filled = pattern.map((part, i) => (part.startsWith(':') ? segments[i] : part)).join('/');
    const known = methods.get(filled) ?? new Set<string>();
    // Catch-alls (such as the 405 answers) say nothing about the methods a path serves.
    if (route.method !== 'ALL') known.add(route.method);
    methods.set(filled, known);
  }
  return closestNames(path, [...methods.keys()]).map((nearest) => `${[...methods.get(nearest)!].join('/') || 'POST'} ${nearest}`);
}

/** The pipeline's view of a Hono request: the worker's variables and its `waitUntil`. */
export function scopeOf(c: Context<{ Bindings: Env }>): RequestScope {
  return { env: c.env, waitUntil: (promise: Promise<unknown>) => c.executionCtx.waitUntil(promise) };
}

/**
 * Serialises an outcome into the envelope response: the one place every HTTP answer is built (tool
 * calls, the other routes, MCP's HTTP-level refusals). Every 429 and 503 carries `Retry-After`:
 * `details.retry_after_ms` in whole seconds, rounded up; every 401 a `WWW-Authenticate` challenge.
 */
export function respond(outcome: Outcome<unknown>, meta: Meta): Response {
  if (outcome.ok) return Response.json(envelope(outcome, meta));
  const waitMs = retryAfterMs(outcome);
  const status = statusOf(outcome);
  const headers: Record<string, string> = waitMs === undefined ? {} : { 'retry-after': String(Math.ceil(waitMs / 1000)) };
  // RFC 6750; with OAuth on, shared/http/oauth.ts adds where to authorize (resource_metadata).
  if (status === 401) headers['www-authenticate'] = 'Bearer realm="edge-tools"';
  return Response.json(envelope(outcome, meta), { status, headers });
}

/** Answers a route that runs no tool; such answers are not executions, so attempts is 0. */
export function answer(outcome: Outcome<unknown>, tool: string, traceId?: string): Response {
  return respond(outcome, metaWithoutExecution(tool, traceId));
}
