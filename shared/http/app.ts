/**
 * The HTTP surface. {@link createGateway} serves every tool it is given; {@link createToolWorker}
 * serves one tool alone, for per-tool deploys. Both answer every route with the envelope, except
 * the OpenAPI document and MCP's JSON-RPC messages (whose tool results carry the envelope).
 */
import { Hono, type Context } from 'hono';
import { fail, metaWithoutExecution, ok, type Outcome } from '../core/contract.ts';
import type { Env } from '../runtime/env.ts';
import { log } from '../observability/log.ts';
import { createMcpHandler, mcpCors } from './mcp.ts';
import { openAiCatalog } from './openai-export.ts';
import { observabilityRoutes } from './observability.ts';
import { recordRoutes } from './records.ts';
import { createOpenApiDocument, type OpenApiOptions } from './openapi.ts';
import { respond, runToolCall, unexpected, type PipelineOptions } from '../runtime/pipeline.ts';
import { checkReadiness } from '../runtime/readiness.ts';
import { plural } from '../core/plural.ts';
import type { AnyTool, ToolAnnotations } from '../core/tool.ts';

/** One catalog entry: what a model needs to choose and call the tool. */
export interface CatalogEntry {
  id: string;
  /** A short human title. */
  title: string;
  description: string;
  /** What calling it does (the same facts as MCP's tool annotations). */
  annotations: ToolAnnotations;
  /** Whether an idempotency key makes repeating a call safe (every tool that writes). */
  accepts_idempotency_key: boolean;
  input_schema: Record<string, unknown>;
  output_schema: Record<string, unknown>;
}

/**
 * A worker serving all `tools`:
 * - `POST /tools/:toolId` runs a tool;
 * - `GET /tools` is the catalog (ids, descriptions, input and output JSON Schemas);
 *   `GET /tools?format=openai` the same tools as OpenAI function definitions (strict mode);
 * - `POST /mcp` serves the tools over MCP (Streamable HTTP, stateless);
 * - `GET /openapi.json` is the OpenAPI 3.1 document of these routes;
 * - `GET /health` answers when the worker is up; `GET /health/ready` whether its database and
 *   Redis answer (503 when one does not).
 * - `GET /executions`, `GET /executions/:trace_id`, `GET /metrics` and `GET /dashboard` read the
 *   caller's trace and metrics (shared/http/observability.ts);
 * - `GET /documents/:id` and `GET /tasks/:id` read the records answers link to.
 */
export function createGateway(tools: readonly AnyTool[], options: PipelineOptions = {}) {
  return refuseOtherMethods(routes(tools, options, {}));
}

/** The type of a gateway, for typed clients: `hc<Gateway>(url)` (see functions/client.ts). */
export type Gateway = ReturnType<typeof createGateway>;

/** A worker serving one tool: `POST /` runs it, plus everything {@link createGateway} serves for it. */
export function createToolWorker(tool: AnyTool, options: PipelineOptions = {}) {
  return refuseOtherMethods(routes([tool], options, { toolPath: () => '/' }).post('/', (c) => runToolCall(tool, c.req.raw, scopeOf(c), options)));
}

/** The routes of a gateway over `tools`, chained so that their types reach `hc<Gateway>`. */
function routes(tools: readonly AnyTool[], options: PipelineOptions, openApiOptions: OpenApiOptions) {
  const byId = new Map(tools.map((tool) => [tool.id, tool]));
  if (byId.size !== tools.length) throw new Error('Two tools share an id; tool ids must be unique.');
  const ids = [...byId.keys()].join(', ');
  const mcp = createMcpHandler(tools, options);
  const openApi = createOpenApiDocument(tools, openApiOptions);

  const app = new Hono<{ Bindings: Env }>()
    .get('/health', () => answer(ok({ status: 'ok', tools: byId.size }, 'The service is up.'), 'health'))
    .get('/health/ready', async (c) => answer(await checkReadiness(c.env), 'health'))
    .get('/tools', (c) => {
      const format = c.req.query('format');
      if (format === 'openai') return answer(openAiCatalog(tools), 'catalog');
      if (format !== undefined) {
        return answer(
          fail('VALIDATION_ERROR', `Query parameter 'format' must be 'openai' or absent, but received '${format.slice(0, 60)}'.`, {
            hint: 'GET /tools for the catalog, GET /tools?format=openai for OpenAI function definitions.',
          }),
          'catalog',
        );
      }
      return answer(ok({ tools: tools.map(catalogEntry) }, `${plural(tools.length, 'tool')} available: ${ids}.`), 'catalog');
    })
    .get('/openapi.json', (c) => c.json(openApi(new URL(c.req.url).origin)))
    .post('/tools/:toolId', (c) => {
      const toolId = c.req.param('toolId');
      const tool = byId.get(toolId);
      if (!tool) {
        return answer(
          fail('UNKNOWN_TOOL', `There is no tool '${toolId}'. Available tools: ${ids}.`, {
            hint: 'List the tools and their input schemas with GET /tools, then call POST /tools/<id>.',
            details: { available_tools: [...byId.keys()] },
          }),
          toolId,
        );
      }
      return runToolCall(tool, c.req.raw, scopeOf(c), options);
    })
    .use('/mcp', mcpCors())
    .all('/mcp', (c) => mcp(c.req.raw, scopeOf(c)))
    .route('/', observabilityRoutes())
    .route('/', recordRoutes());

  app.notFound((c) =>
    answer(
      fail('NOT_FOUND', `There is no route ${c.req.method} ${new URL(c.req.url).pathname}.`, {
        hint: ROUTES_HINT,
        details: { entity_type: 'route' },
      }),
      'gateway',
    ),
  );
  app.onError((error, c) => {
    const traceId = crypto.randomUUID();
    log('error', 'unhandled_error', { trace_id: traceId, path: new URL(c.req.url).pathname, error: String(error) });
    return answer(unexpected(error, traceId), 'gateway', traceId);
  });
  return app;
}

const ROUTES_HINT = 'Routes: GET /health, GET /health/ready, GET /tools, GET /openapi.json, POST /tools/<tool id> with a JSON body, POST /mcp (MCP), GET /executions, GET /executions/<trace id>, GET /metrics, GET /dashboard, GET /documents/<id>, GET /tasks/<id>.';

/**
 * Answers 405 METHOD_NOT_ALLOWED, with an `Allow` header and the envelope, on every path `app`
 * routes for other methods only (`GET /tools/log-mood`, `POST /health`, ...). Registered after
 * the routes, so it covers every route registered before it. Paths routed for every method (such
 * as `/mcp`, whose handler answers 405 itself) are left alone.
 */
function refuseOtherMethods<App extends Hono<{ Bindings: Env }>>(app: App): App {
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
          hint: ROUTES_HINT,
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

function catalogEntry(tool: AnyTool): CatalogEntry {
  const schemas = tool.jsonSchemas();
  return {
    id: tool.id,
    title: tool.title,
    description: tool.description,
    annotations: tool.annotations,
    accepts_idempotency_key: tool.acceptsIdempotencyKey,
    input_schema: schemas.input,
    output_schema: schemas.output,
  };
}

function scopeOf(c: Context<{ Bindings: Env }>) {
  return { env: c.env, waitUntil: (promise: Promise<unknown>) => c.executionCtx.waitUntil(promise) };
}

/** Answers a route that runs no tool; such answers are not executions, so attempts is 0. */
function answer(outcome: Outcome<unknown>, tool: string, traceId?: string): Response {
  return respond(outcome, metaWithoutExecution(tool, traceId));
}
