/**
 * The HTTP surface. {@link createGateway} serves every tool it is given; {@link createToolWorker}
 * serves one tool alone, for per-tool deploys. Both answer every route with the envelope.
 */
import { Hono, type Context } from 'hono';
import { fail, ok, type Failure, type Meta, type Outcome } from './contract.ts';
import type { Env } from './env.ts';
import { log } from './log.ts';
import { respond, runToolCall, unexpected, type PipelineOptions } from './pipeline.ts';
import type { AnyTool } from './tool.ts';

type App = Hono<{ Bindings: Env }>;

/** One catalog entry: what a model needs to choose and call the tool. */
export interface CatalogEntry {
  id: string;
  description: string;
  input_schema: Record<string, unknown>;
  output_schema: Record<string, unknown>;
}

/**
 * A worker serving all `tools`:
 * - `POST /tools/:toolId` runs a tool;
 * - `GET /tools` is the catalog (ids, descriptions, input and output JSON Schemas);
 * - `GET /health` answers when the worker is up.
 */
export function createGateway(tools: readonly AnyTool[], options: PipelineOptions = {}): App {
  const byId = new Map(tools.map((tool) => [tool.id, tool]));
  if (byId.size !== tools.length) throw new Error('Two tools share an id; tool ids must be unique.');
  const ids = [...byId.keys()].join(', ');
  const app: App = new Hono();

  app.get('/health', () => answer(ok({ status: 'ok', tools: byId.size }, 'The service is up.'), 'health'));
  app.get('/tools', () =>
    answer(ok({ tools: tools.map(catalogEntry) }, `${tools.length} tool${tools.length === 1 ? '' : 's'} available: ${ids}.`), 'catalog'),
  );
  app.post('/tools/:toolId', (c) => {
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
  });

  app.notFound((c) =>
    answer(
      fail('NOT_FOUND', `There is no route ${c.req.method} ${new URL(c.req.url).pathname}.`, {
        hint: 'Routes: GET /health, GET /tools, POST /tools/<tool id> with a JSON body.',
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

/** A worker serving one tool: `POST /` runs it, plus everything {@link createGateway} serves for it. */
export function createToolWorker(tool: AnyTool, options: PipelineOptions = {}): App {
  const app = createGateway([tool], options);
  app.post('/', (c) => runToolCall(tool, c.req.raw, scopeOf(c), options));
  return app;
}

function catalogEntry(tool: AnyTool): CatalogEntry {
  const schemas = tool.jsonSchemas();
  return { id: tool.id, description: tool.description, input_schema: schemas.input, output_schema: schemas.output };
}

function scopeOf(c: Context<{ Bindings: Env }>) {
  return { env: c.env, waitUntil: (promise: Promise<unknown>) => c.executionCtx.waitUntil(promise) };
}

/** Answers a route that runs no tool; such answers are not executions, so attempts is 0. */
function answer(outcome: Outcome<unknown> | Failure, tool: string, traceId: string = crypto.randomUUID()): Response {
  const meta: Meta = { tool, trace_id: traceId, duration_ms: 0, attempts: 0, queued_ms: 0, performance_warning: false };
  return respond(outcome, meta);
}
