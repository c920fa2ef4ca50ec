/**
 * The gateway's HTTP surface: {@link createGateway} serves every tool it is given, with the
 * catalog, OpenAPI, the OpenAI export, MCP and the observability routes. Every route answers with
 * the envelope, except the OpenAPI document and MCP's JSON-RPC messages (whose tool results carry
 * the envelope). A tool's own worker is leaner: shared/http/tool-worker.ts.
 */
import { fail, ok } from '../core/contract.ts';
import { createMcpHandler, mcpCors } from './mcp.ts';
import { openAiCatalog } from './openai-export.ts';
import { observabilityRoutes } from './observability.ts';
import { recordRoutes } from './records.ts';
import { createOpenApiDocument } from './openapi.ts';
import { runToolCall, type PipelineOptions } from '../runtime/pipeline.ts';
import { plural } from '../core/plural.ts';
import type { AnyTool, ToolAnnotations } from '../core/tool.ts';
import { answer, baseApp, refuseOtherMethods, scopeOf } from './base.ts';

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
 * The gateway: a worker serving all `tools`:
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
  const byId = new Map(tools.map((tool) => [tool.id, tool]));
  if (byId.size !== tools.length) throw new Error('Two tools share an id; tool ids must be unique.');
  const ids = [...byId.keys()].join(', ');
  const mcp = createMcpHandler(tools, options);
  const openApi = createOpenApiDocument(tools);

  // Chained, so that the routes' types reach `hc<Gateway>`.
  const app = baseApp({ tools: byId.size, routesHint: ROUTES_HINT })
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
  return refuseOtherMethods(app, ROUTES_HINT);
}

/** The type of a gateway, for typed clients: `hc<Gateway>(url)` (see functions/client.ts). */
export type Gateway = ReturnType<typeof createGateway>;

const ROUTES_HINT =
  'Routes: GET /health, GET /health/ready, GET /tools, GET /openapi.json, POST /tools/<tool id> with a JSON body, POST /mcp (MCP), GET /executions, GET /executions/<trace id>, GET /metrics, GET /dashboard.';

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
