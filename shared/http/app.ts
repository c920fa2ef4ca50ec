/**
 * The gateway's HTTP surface: {@link createGateway} serves every tool it is given, with the
 * catalog, OpenAPI, the OpenAI export, MCP and the observability routes. Every route answers with
 * the envelope, except the OpenAPI document and MCP's JSON-RPC messages (whose tool results carry
 * the envelope). A tool's own worker is leaner: shared/http/tool-app.ts.
 */
import { fail, ok, type Failure } from '../core/contract.ts';
import { createMcpHandler, mcpCors, type McpHandler } from './mcp.ts';
import { geminiCatalog } from './gemini-export.ts';
import { openAiCatalog } from './openai-export.ts';
import { codeRoutes } from './code.ts';
import { grantRoutes } from './grants.ts';
import { observabilityRoutes } from './observability.ts';
import { recordRoutes } from './records.ts';
import { createOpenApiDocument } from './openapi.ts';
import { openDb } from './authorize.ts';
import { deniedTool, deniedToolsets, type Caller } from '../auth/caller.ts';
import { plural } from '../core/plural.ts';
import { closestNames, didYouMean } from '../core/suggest.ts';
import type { AnyTool, ToolAnnotations } from '../core/tool.ts';
import { parseToolsets, TOOLSETS, type Toolset } from '../core/toolsets.ts';
import type { JsonSchema } from './compact-schema.ts';
import { answer, baseApp, refuseOtherMethods, scopeOf } from './base.ts';
import { served, serveToolCall, type Served, type ServeOptions } from './tool-route.ts';
import type { Context } from 'hono';
import type { Env } from '../runtime/env.ts';
import { oauthAccessTokens } from '../auth/oauth.ts';

/** One catalog entry: what a model needs to choose and call the tool. */
export interface CatalogEntry {
  id: string;
  /** The toolset it belongs to (`GET /tools?toolset=`, `POST /mcp/<toolset>`). */
  toolset: Toolset;
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
 *   `GET /tools?format=openai` the same tools as OpenAI function definitions (strict mode),
 *   `GET /tools?format=gemini` as Gemini function declarations;
 * - `POST /mcp` serves the tools over MCP (Streamable HTTP, stateless), `POST /mcp/<toolsets>`
 *   (`/mcp/study,documents`) those of some toolsets only; `GET /tools` and `GET /openapi.json`
 *   take `?toolset=` too, and `GET /tools` takes `?tool=<id>` (repeated or comma-separated);
 *   the three listings are public, and sent with a credential they list only what it may call;
 * - `POST /code` and `POST /mcp/code` run an agent's code that calls these tools (code mode, when
 *   the Worker Loader binding is configured: shared/codemode/), `GET /code/types` declares them;
 * - `GET /openapi.json` is the OpenAPI 3.1 document of these routes;
 * - `GET /health` answers when the worker is up; `GET /health/ready` whether its database and
 *   Redis answer (503 when one does not).
 * - `GET /executions`, `GET /executions/:trace_id`, `GET /metrics` and `GET /dashboard` read the
 *   caller's trace and metrics (shared/http/observability.ts);
 * - `GET /grants` and `DELETE /grants/:grant_id` list and revoke the project's OAuth clients
 *   (shared/http/grants.ts);
 * - `GET /documents/:id` and `GET /tasks/:id` read the records answers link to.
 *
 * Every route takes API keys, and OAuth access tokens where OAuth is on (`accessTokens`, default
 * shared/auth/oauth.ts's; the OAuth endpoints themselves are shared/http/oauth.ts's).
 */
export function createGateway(tools: readonly AnyTool[], { accessTokens = oauthAccessTokens(openDb), ...rest }: ServeOptions = {}) {
  const options = served({ accessTokens, ...rest });
  const byId = new Map(tools.map((tool) => [tool.id, tool]));
  if (byId.size !== tools.length) throw new Error('Two tools share an id; tool ids must be unique.');
  const viewOf = toolsetViews(tools, options);
  const all = viewOf(undefined);

  // Chained, so that the routes' types reach `hc<Gateway>`.
  const app = baseApp({ tools: byId.size, routesHint: ROUTES_HINT })
    .get('/tools', catalogHandler(viewOf, options))
    .get('/openapi.json', async (c) => {
      const who = await listingCaller(c, options);
      if (!who.ok) return answer(who, 'openapi');
      const list = c.req.query('toolset');
      const parsed = list === undefined ? undefined : parseToolsets(list, { source: "Query parameter 'toolset'" });
      if (parsed && !parsed.ok) return answer(parsed, 'openapi');
      const chosen = toolsetsFor(who.caller, parsed?.toolsets);
      if (!chosen.ok) return answer(chosen, 'openapi');
      return c.json(viewOf(chosen.toolsets).openApi(new URL(c.req.url).origin));
    })
    .post('/tools/:toolId', async (c) => {
      const toolId = c.req.param('toolId');
      const tool = byId.get(toolId);
      if (tool) return serveToolCall(tool, c.req.raw, scopeOf(c), options);
      // Named and suggested: the tools the credential sent may call (every tool without one).
      const who = await listingCaller(c, options);
      if (!who.ok) return answer(who, toolId);
      return answer(
        unknownTool(
          toolId,
          tools.filter((tool) => !who.caller || !deniedTool(who.caller, tool)),
        ),
        toolId,
      );
    })
    .use('/mcp', mcpCors())
    .all('/mcp', (c) => all.mcp(c.req.raw, scopeOf(c)))
    .route('/', codeRoutes(tools, options))
    .use('/mcp/:toolsets', mcpCors())
    .all('/mcp/:toolsets', (c) => {
      const parsed = parseToolsets(c.req.param('toolsets'), {
        source: `The path ${new URL(c.req.url).pathname}`,
        code: 'NOT_FOUND',
        hint: 'POST /mcp serves every tool; POST /mcp/<toolset> (or a comma-separated list, /mcp/study,documents) serves only those toolsets.',
      });
      if (!parsed.ok) return answer(parsed, 'mcp');
      return viewOf(parsed.toolsets).mcp(c.req.raw, scopeOf(c));
    })
    .route('/', observabilityRoutes(tools, options))
    .route('/', grantRoutes(options))
    .route('/', recordRoutes(options));
  // The worker's authoriser goes with it: the OAuth consent page (shared/http/oauth.ts) checks keys with it too.
  return Object.assign(refuseOtherMethods(app, ROUTES_HINT), { authorize: options.authorize });
}

/** `GET /tools`: the catalog of the tools the caller may list, or its OpenAI (`format=openai`) or Gemini (`format=gemini`) export. */
function catalogHandler(viewOf: ReturnType<typeof toolsetViews>, options: Served) {
  return async (c: Context<{ Bindings: Env }>) => {
    const format = c.req.query('format');
    if (format !== undefined && format !== 'openai' && format !== 'gemini') {
      return answer(
        fail('VALIDATION_ERROR', `Query parameter 'format' must be 'openai', 'gemini' or absent, but received '${format.slice(0, 60)}'.`, {
          hint: 'GET /tools for the catalog, GET /tools?format=openai for OpenAI function definitions, GET /tools?format=gemini for Gemini function declarations.',
        }),
        'catalog',
      );
    }
    const who = await listingCaller(c, options);
    if (!who.ok) return answer(who, 'catalog');
    const selected = selectTools(viewOf, c.req.queries('toolset'), c.req.queries('tool'), who.caller);
    if (!selected.ok) return answer(selected, 'catalog');
    const chosen = selected.tools;
    if (format === 'openai') return answer(openAiCatalog(chosen), 'catalog');
    if (format === 'gemini') return answer(geminiCatalog(chosen), 'catalog');
    return answer(
      ok({ tools: chosen.map(catalogEntry) }, `${plural(chosen.length, 'tool')} available: ${chosen.map((tool) => tool.id).join(', ')}.`),
      'catalog',
    );
  };
}

/** The type of a gateway, for typed clients: `hc<Gateway>(url)` (see functions/client.ts). */
export type Gateway = ReturnType<typeof createGateway>;

const ROUTES_HINT =
  'Routes: GET /health, GET /health/ready, GET /tools (?toolset=, ?tool=, ?format=openai or gemini), GET /openapi.json (?toolset=), POST /tools/<tool id> with a JSON body, POST /mcp or /mcp/<toolsets> (MCP), POST /code or /mcp/code (code mode), GET /code/types, GET /executions, GET /executions/<trace id>, GET /refusals, GET /metrics, GET /grants, DELETE /grants/<grant id>, GET /dashboard.';

function catalogEntry(tool: AnyTool): CatalogEntry {
  const schemas = tool.jsonSchemas();
  return {
    id: tool.id,
    toolset: tool.toolset,
    title: tool.title,
    description: tool.description,
    annotations: tool.annotations,
    accepts_idempotency_key: tool.acceptsIdempotencyKey,
    input_schema: schemas.input,
    output_schema: schemas.output,
  };
}

/** What the gateway serves for one choice of toolsets: its tools, their MCP endpoint and OpenAPI document. */
interface ToolsetView {
  tools: readonly AnyTool[];
  mcp: McpHandler;
  openApi: (serverUrl: string) => JsonSchema;
}

/**
 * The view of `toolsets` (every tool when undefined), built on first use and kept: there are at
 * most 2^4 choices, and each builds its schemas lazily.
 */
function toolsetViews(tools: readonly AnyTool[], options: Served): (toolsets: readonly Toolset[] | undefined) => ToolsetView {
  const views = new Map<string, ToolsetView>();
  return (toolsets) => {
    const key = toolsets?.join(',') ?? '*';
    let view = views.get(key);
    if (!view) {
      const chosen = toolsets ? tools.filter((tool) => toolsets.includes(tool.toolset)) : tools;
      view = { tools: chosen, mcp: createMcpHandler(chosen, options), openApi: createOpenApiDocument(chosen) };
      views.set(key, view);
    }
    return view;
  };
}

/** UNKNOWN_TOOL for `POST /tools/<id>`, suggesting the closest of `visible` (the tools the caller may call). */
function unknownTool(toolId: string, visible: readonly AnyTool[]): Failure {
  const ids = visible.map((tool) => tool.id);
  const suggestions = closestNames(toolId, ids);
  return fail('UNKNOWN_TOOL', `There is no tool '${toolId.slice(0, 100)}'.${didYouMean(suggestions)} Available tools: ${ids.join(', ')}.`, {
    hint: suggestions.length
      ? `Call POST /tools/${suggestions[0]}; GET /tools lists every tool with its input schema.`
      : 'List the tools and their input schemas with GET /tools, then call POST /tools/<id>.',
    details: { available_tools: ids, ...(suggestions.length && { suggestions }) },
  });
}

/**
 * Who asks for a listing (the catalog, the OpenAI export, OpenAPI, an unknown tool's answer):
 * no caller without an `Authorization` header, for the public listing of every tool; with one,
 * the verified caller, to whom only what it may call is listed, or why the credential is refused.
 */
async function listingCaller(c: Context<{ Bindings: Env }>, { authorize }: Served): Promise<{ ok: true; caller?: Caller } | Failure> {
  if (!c.req.header('authorization')) return { ok: true };
  const gate = await authorize(c.req.raw, scopeOf(c));
  if (!gate.ok) return gate;
  const caller = await gate.confirm();
  return 'error' in caller ? caller : { ok: true, caller };
}

/**
 * The toolsets to list for `caller`: those asked for (every toolset when undefined), within the
 * credential's; PERMISSION_DENIED when the credential reaches none of those asked for.
 */
function toolsetsFor(
  caller: Caller | undefined,
  asked: readonly Toolset[] | undefined,
): { ok: true; toolsets?: readonly Toolset[] } | Failure {
  const granted = caller?.toolsets;
  if (!granted) return { ok: true, toolsets: asked };
  const denied = asked && deniedToolsets(caller, asked, `query parameter 'toolset' (${asked.join(',')})`);
  return denied ?? { ok: true, toolsets: (asked ?? TOOLSETS).filter((toolset) => granted.includes(toolset)) };
}

/**
 * The tools a catalog request asks for: those of `?toolset=` (every toolset when absent), narrowed
 * to `?tool=` when given; each parameter repeated or comma-separated. With a caller, only the tools
 * it may call: naming another is PERMISSION_DENIED.
 */
function selectTools(
  viewOf: ReturnType<typeof toolsetViews>,
  toolsetParams: string[] | undefined,
  toolParams: string[] | undefined,
  caller: Caller | undefined,
): { ok: true; tools: readonly AnyTool[] } | Failure {
  let asked: Toolset[] | undefined;
  if (toolsetParams?.length) {
    const parsed = parseToolsets(toolsetParams.join(','), { source: "Query parameter 'toolset'" });
    if (!parsed.ok) return parsed;
    asked = parsed.toolsets;
  }
  const chosen = toolsetsFor(caller, asked);
  if (!chosen.ok) return chosen;
  const view = viewOf(chosen.toolsets);
  const visible = caller ? view.tools.filter((tool) => !deniedTool(caller, tool)) : view.tools;
  if (!toolParams?.length) return { ok: true, tools: visible };
  const wanted = toolParams
    .flatMap((list) => list.split(','))
    .map((id) => id.trim())
    .filter(Boolean);
  const denied =
    caller && wanted.map((id) => viewOf(asked).tools.find((tool) => tool.id === id)).find((tool) => tool && deniedTool(caller, tool));
  if (denied) return deniedTool(caller, denied)!;
  const ids = visible.map((tool) => tool.id);
  const unknown = wanted.filter((id) => !ids.includes(id));
  if (unknown.length) {
    const suggestions = unknown.flatMap((id) => closestNames(id, ids, { max: 1 }));
    return fail(
      'UNKNOWN_TOOL',
      `Query parameter 'tool' names ${unknown.map((id) => `'${id.slice(0, 60)}'`).join(', ')}, which ${unknown.length === 1 ? 'is not a tool' : 'are not tools'} here.${didYouMean(suggestions)} Tools: ${ids.join(', ')}.`,
      {
        hint: 'Name tools by their ids, repeated (?tool=a&tool=b) or comma-separated (?tool=a,b).',
        details: { available_tools: ids, ...(suggestions.length && { suggestions }) },
      },
    );
  }
  return { ok: true, tools: visible.filter((tool) => wanted.includes(tool.id)) };
}
