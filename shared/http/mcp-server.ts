/**
 * The MCP server behind `POST /mcp`: the official SDK (v2, `@modelcontextprotocol/server`) with a
 * fresh low-level `Server` per request, so that any isolate answers any request. The endpoint
 * (shared/http/mcp.ts) checks the origin and the credentials and reads the body, then loads this
 * module, and the SDK with it, on the first request it serves: the SDK's module scope builds every
 * protocol schema, most of what loading the gateway would otherwise cost, and no other route needs it.
 *
 * - protocol 2026-07-28, stateless: no `initialize` needed; each request carries its version and
 *   the client's capabilities in `_meta` (and the `MCP-Protocol-Version`, `Mcp-Method` headers),
 *   `server/discover` answers what the server supports. Served by the SDK's `createMcpHandler`.
 * - 2025-11-25, 2025-06-18, 2025-03-26 (and 2024-11-05) through the same endpoint: the
 *   `initialize` handshake and the messages after it, statelessly, over the SDK's Streamable HTTP
 *   transport with JSON answers (no session id, no event stream).
 * - `tools/list` advertises each tool in registry order (the same every time), with its title,
 *   annotations, description and input JSON Schema (the catalog's, compacted: compact-schema.ts);
 *   every result carries the envelope as `structuredContent`, which the instructions describe once.
 *   On 2026-07-28 it carries cache hints ({@link TOOLS_LIST_CACHE}).
 * - `tools/call` runs the pipeline (`callTool`: validation, rate limit, slot, retries, trace) for
 *   the caller the request was authorised as, once for all its messages. An idempotency key travels in the request's `_meta["edge-tools/idempotency-key"]`, a W3C
 *   `traceparent` in `params._meta.traceparent` (or the HTTP header) makes the execution a span of
 *   the caller's trace, and the model's id of the call in `_meta["edge-tools/tool-call-id"]` (or the
 *   `Tool-Call-Id` header) becomes the span's `gen_ai.tool.call.id`. Every failure, validation included, is a result with `isError: true` and a
 *   text the model can act on; JSON-RPC errors are left to protocol faults.
 *
 * The low-level `Server` is used rather than `McpServer` on purpose: `McpServer` validates input
 * with its own zod pass and answers in its own words, while the pipeline must do it.
 */
import {
  createMcpHandler as createSdkHandler,
  isLegacyRequest,
  Server,
  WebStandardStreamableHTTPServerTransport,
  type CallToolResult,
  type RequestId,
  type Tool as McpTool,
} from '@modelcontextprotocol/server';
import { envelope, fail, metaWithoutExecution, type Failure, type Meta, type Outcome, type ToolResult } from '../core/contract.ts';
import { compactSchema } from './compact-schema.ts';
import { callTool } from '../runtime/pipeline.ts';
import type { AnyTool, ToolAnnotations } from '../core/tool.ts';
import type { Gate } from '../auth/gate.ts';
import { deniedTool, type Caller } from '../auth/caller.ts';
import type { ToolCall } from '../runtime/call.ts';
import type { RequestScope } from '../runtime/env.ts';
import { DEFAULT_BODY_LIMIT_BYTES, screenInput } from '../core/body.ts';
import { duplicateKeyFailure, duplicateKeys, fieldPathOf, type DuplicateKey } from '../core/duplicate-keys.ts';
import { closestNames, didYouMean } from '../core/suggest.ts';
import { keyFromMeta } from '../runtime/idempotency.ts';
import { IDEMPOTENCY_META_KEY, KEY_TTL_HOURS } from '../core/idempotency-key.ts';
import { TOOL_CALL_ID_HEADER, TOOL_CALL_ID_META_KEY, toolCallIdOf } from '../observability/trace-context.ts';
import { respond, SERVER_INFO } from './base.ts';
import type { ServeOptions } from './tool-route.ts';

const INSTRUCTIONS =
  'Every tool result carries the envelope as structuredContent: { success: true, message, data, links?, meta } or ' +
  '{ success: false, message, error: { code, message, hint?, retryable, details? }, meta }. When a call fails, ' +
  'error.message says what was wrong and error.hint shows a valid call; repeat a call unchanged only when ' +
  `error.retryable is true. Every tool that is not read-only takes an idempotency key in the call's _meta "${IDEMPOTENCY_META_KEY}": ` +
  `repeating the call with the same key and input within ${KEY_TTL_HOURS} h answers the first call again instead of running it twice.`;

/**
 * How long clients of 2026-07-28 may keep `tools/list` and `server/discover` answers: five
 * minutes, so that a deploy that adds or changes a tool is seen within minutes (the list changes
 * only with a deploy, and a client that lists again after the hint runs out gets the new one). The
 * list is the same for every caller whose credential reaches every tool (the catalog, `GET /tools`,
 * is public), so shared caches may keep it too. A credential limited to toolsets, or read-only, is
 * listed fewer tools: its `tools/list` is private.
 */
export const TOOLS_LIST_CACHE = { ttlMs: 300_000, cacheScope: 'public' } as const;

/** An authorised request whose body was read, as the endpoint hands it to the server. */
export interface McpMessages {
  request: Request;
  scope: RequestScope;
  /**
   * Who is calling (what it may see and run), authorised once for the request: its gate;
   * undefined for a request without a credential that only lists (public listing, shared/http/mcp.ts):
   * it is listed every tool a credential could reach, and any tool call answers UNAUTHENTICATED.
   */
  gate: Gate | undefined;
  /** The body, as sent. */
  body: string;
}

/** Answers the messages of one request. */
export type McpServer = (messages: McpMessages) => Promise<Response>;

/** What one HTTP request brings to the MCP server that answers it. */
export interface McpRequest {
  request: Request;
  scope: RequestScope;
  /** Each `tools/call` of the body as sent, by JSON-RPC id (see {@link rawToolCalls}). */
  calls: Map<RequestId, RawToolCall>;
  gate: Gate | undefined;
}

/**
 * The MCP server of `tools`. Pipeline options (body limit, retries, ...) are those of the HTTP
 * routes.
 */
export function createMcpServer(tools: readonly AnyTool[], options: ServeOptions = {}): McpServer {
  const byId = new Map(tools.map((tool) => [tool.id, tool]));
  let listed: { tool: AnyTool; described: McpTool }[] | undefined;
  /** The tools the caller may run: those outside its toolsets, or writing for a read-only caller, are not listed. */
  const listTools = (caller: Caller | undefined) =>
    (listed ??= tools.map((tool) => ({ tool, described: describeTool(tool) })))
      .filter(({ tool }) => !caller || !deniedTool(caller, tool))
      .map(({ described }) => described);
  const bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;

  /** A fresh server for one request: it lists the tools and runs calls through the pipeline. */
  const serverFor = ({ request, scope, calls, gate }: McpRequest): Server => {
    const caller = gate?.caller;
    const server = new Server(SERVER_INFO, {
      capabilities: { tools: { listChanged: false } },
      instructions: INSTRUCTIONS,
      cacheHints: {
        'tools/list': caller?.toolsets || caller?.readOnly ? { ...TOOLS_LIST_CACHE, cacheScope: 'private' } : TOOLS_LIST_CACHE,
        'server/discover': TOOLS_LIST_CACHE,
      },
    });
    server.setRequestHandler('tools/list', () => ({ tools: listTools(caller) }));
    server.setRequestHandler('tools/call', async ({ params }, ctx) => {
      const tool = byId.get(params.name);
      // The endpoint lets no call through without a credential; should one come, it is refused the same way.
      if (!gate)
        return toolResult(
          fail('UNAUTHENTICATED', 'A tool call needs a credential: send Authorization: Bearer <API key or OAuth access token>.'),
          metaWithoutExecution(params.name),
        );
      if (!tool)
        return toolResult(
          unknownTool(
            params.name,
            listTools(caller).map(({ name }) => name),
          ),
          metaWithoutExecution(params.name),
        );
      const sent = calls.get(ctx.mcpReq.id) ?? { arguments: params.arguments, meta: params._meta };
      const progressToken = ctx.mcpReq._meta?.progressToken;
      const { outcome, meta } = await callTool(
        tool,
        {
          ...toolCallOf(sent, request, ctx.mcpReq.signal),
          toolCallId: toolCallIdOf(metaValue(sent.meta, TOOL_CALL_ID_META_KEY)) ?? toolCallIdOf(request.headers.get(TOOL_CALL_ID_HEADER)),
          // Progress is a courtesy: a notification that cannot be sent does not fail the call.
          onProgress:
            progressToken === undefined
              ? undefined
              : (progress) =>
                  void ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, ...progress } }).catch(() => {}),
        },
        gate,
        scope,
        options,
      );
      return toolResult(outcome, meta);
    });
    return server;
  };
  return serveMcp(serverFor, bodyLimitBytes);
}

/**
 * The MCP server whose per-request `Server` is `serverFor`'s: the protocol versions, statelessness
 * and the re-check of a cached key are the same whatever it serves (the tools, or code mode's
 * shared/http/mcp-code.ts).
 */
export function serveMcp(serverFor: (context: McpRequest) => Server, bodyLimitBytes: number): McpServer {
  return async ({ request, scope, gate, body }) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    const calls = rawToolCalls(parsed, parsed === undefined ? [] : duplicateKeys(body));
    // A tool call is confirmed by the pipeline, alongside its admission; any other request waits
    // for the credential's confirmation here.
    const messages = Array.isArray(parsed) ? parsed.length : 1;
    if (gate && calls.size < messages) {
      const confirmed = await gate.confirm();
      if ('error' in confirmed) return respond(confirmed, metaWithoutExecution('mcp'));
    }
    const context = { request, scope, calls, gate };
    if (parsed === undefined) {
      // The transport answers the protocol's parse error for the same bytes.
      const unparsed = new Request(request.url, { method: 'POST', headers: request.headers, body });
      return serveLegacy(serverFor(context), unparsed, undefined);
    }
    if (await isLegacyRequest(request, parsed, { maxRequestBodySize: bodyLimitBytes }))
      return serveLegacy(serverFor(context), request, parsed);
    // 2026-07-28: the SDK checks the envelope and the headers, answers server/discover and
    // subscriptions/listen, and hands the rest to the server.
    const modern = createSdkHandler(() => serverFor(context), { legacy: 'reject', maxRequestBodySize: bodyLimitBytes });
    return modern.fetch(request, { parsedBody: parsed });

    /**
     * 2025-era messages: statelessly, no session id, and JSON answers, except for a body with a
     * call that asks for progress (`_meta.progressToken`): its answer is an event stream carrying
     * the progress notifications, then the result. The server closes once that stream has ended.
     */
    async function serveLegacy(server: Server, httpRequest: Request, parsedBody: unknown): Promise<Response> {
      const stream = [...calls.values()].some(({ meta }) => metaValue(meta, 'progressToken') !== undefined);
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: !stream,
        maxRequestBodySize: bodyLimitBytes,
      });
      await server.connect(transport);
      const response = await transport.handleRequest(httpRequest, { parsedBody });
      if (!stream || !response.body) {
        scope.waitUntil(server.close());
        return response;
      }
      const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
      scope.waitUntil(response.body.pipeTo(writable).finally(() => server.close()));
      return new Response(readable, response);
    }
  };
}

/**
 * What `tools/list` answers for `tools`: each tool's name, title, annotations, description and input
 * schema. No `outputSchema`: every result's `structuredContent` is the envelope the server's
 * instructions describe once, and its `data` speaks for itself; a schema per tool would cost every
 * request about a tenth of the list for what the model reads in the answer anyway.
 */
export function listedTools(tools: readonly AnyTool[]): McpTool[] {
  return tools.map(describeTool);
}

function describeTool(tool: AnyTool): McpTool {
  return {
    name: tool.id,
    title: tool.title,
    description: tool.purpose,
    annotations: annotationsOf(tool.annotations),
    inputSchema: compactSchema(tool.jsonSchemas().input) as McpTool['inputSchema'],
  };
}

/**
 * Every annotation, stated explicitly: some clients do not apply MCP's defaults (a tool that
 * writes, may destroy, is not idempotent and reaches the open world) before deciding whether to ask
 * the person. A read-only tool says so and that it destroys nothing; one that writes says all
 * three. (The title is the tool's own `title`.)
 */
function annotationsOf({ readOnlyHint, destructiveHint, idempotentHint, openWorldHint }: ToolAnnotations): McpTool['annotations'] {
  return readOnlyHint
    ? { readOnlyHint, destructiveHint: false, idempotentHint: true, openWorldHint }
    : { readOnlyHint, destructiveHint, idempotentHint, openWorldHint };
}

/** A `tools/call` as sent: its `arguments` and its `params._meta`. */
export interface RawToolCall {
  arguments: unknown;
  meta: unknown;
  /** A key its arguments give twice in one object (JSON.parse kept the last), and where. */
  duplicate?: { key: string; at: string };
}

/**
 * Each `tools/call` in a JSON-RPC body exactly as sent, by request id. The SDK re-parses messages
 * with zod, which silently drops `__proto__` keys, and lifts protocol keys out of `_meta`:
 * screening what was sent keeps MCP's refusals the same as HTTP's, and so does refusing a key the
 * arguments give twice (`duplicates`, found in the body's text).
 */
function rawToolCalls(body: unknown, duplicates: readonly DuplicateKey[]): Map<RequestId, RawToolCall> {
  const calls = new Map<RequestId, RawToolCall>();
  const batch = Array.isArray(body);
  for (const [index, message] of (batch ? body : [body]).entries()) {
    if (typeof message !== 'object' || message === null) continue;
    const { method, id, params } = message as { method?: unknown; id?: unknown; params?: unknown };
    if (method !== 'tools/call' || (typeof id !== 'string' && typeof id !== 'number')) continue;
    const { arguments: args, _meta: meta } =
      typeof params === 'object' && params !== null ? (params as { arguments?: unknown; _meta?: unknown }) : {};
    const prefix = batch ? [index, 'params', 'arguments'] : ['params', 'arguments'];
    const repeated = duplicates.find(({ path }) => prefix.every((part, at) => path[at] === part));
    calls.set(id, {
      arguments: args,
      meta,
      ...(repeated && { duplicate: { key: repeated.key, at: fieldPathOf(repeated.path.slice(prefix.length)) } }),
    });
  }
  return calls;
}

/** One key of a call's `_meta`, if it is an object. */
export function metaValue(meta: unknown, key: string): unknown {
  return typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>)[key] : undefined;
}

/**
 * What every MCP endpoint reads alike of one `tools/call` (`sent`, as {@link rawToolCalls} kept it):
 * its input, screened as HTTP's is (a key given twice refused), its signal (the request's or the
 * call's cancellation), its idempotency key and trace context from `_meta`, and the origin.
 */
export function toolCallOf(
  sent: RawToolCall,
  request: Request,
  cancelled: AbortSignal,
): Pick<ToolCall, 'readInput' | 'signal' | 'idempotencyKey' | 'traceparent' | 'origin'> {
  return {
    readInput: async (hint) => (sent.duplicate ? duplicateKeyFailure(sent.duplicate, hint) : screenInput(sent.arguments ?? {}, hint)),
    signal: AbortSignal.any([request.signal, cancelled]),
    idempotencyKey: keyFromMeta(sent.meta),
    traceparent: traceparentOf(sent.meta) ?? request.headers.get('traceparent'),
    origin: new URL(request.url).origin,
  };
}

/** The W3C `traceparent` an MCP client may put in a call's `_meta` (it wins over the HTTP header). */
export function traceparentOf(meta: unknown): string | undefined {
  const value = metaValue(meta, 'traceparent');
  return typeof value === 'string' ? value : undefined;
}

/** The envelope as an MCP tool result: `structuredContent`, the same in a few lines of text, and `isError`. */
export function toolResult(outcome: Outcome<unknown>, meta: Meta): CallToolResult {
  const result = envelope(outcome, meta);
  return { content: [{ type: 'text', text: renderText(result) }], structuredContent: result, isError: !result.success };
}

/** What the model reads when its client shows `content` only: the message and the data, or the error and what to do. */
function renderText(result: ToolResult<unknown>): string {
  if (result.success) {
    const lines = [result.message, JSON.stringify(result.data)];
    for (const link of result.links ?? []) lines.push(`${link.label}: ${link.url}`);
    if (result.meta.truncated)
      lines.push('The answer was cut to its budget: the message says how to get the rest (next_cursor, when there is one).');
    return lines.join('\n');
  }
  const { error } = result;
  const retryAfter = error.details?.retry_after_ms;
  const lines = [`${error.code}: ${error.message}`];
  if (error.hint) lines.push(`Hint: ${error.hint}`);
  lines.push(error.retryable ? `Retryable: yes${typeof retryAfter === 'number' ? `, after ${retryAfter} ms` : ''}.` : 'Retryable: no.');
  return lines.join('\n');
}

/** UNKNOWN_TOOL, suggesting the closest of the tools the caller is listed (`ids`). */
function unknownTool(name: string, ids: string[]): Failure {
  const suggestions = closestNames(name, ids);
  return fail('UNKNOWN_TOOL', `There is no tool '${name.slice(0, 100)}'.${didYouMean(suggestions)} Available tools: ${ids.join(', ')}.`, {
    hint: suggestions.length
      ? `Call ${suggestions[0]} by that exact name (tools/list gives its input schema).`
      : 'Call tools/list for the tools and their input schemas, then call one by its name.',
    details: { available_tools: ids, ...(suggestions.length && { suggestions }) },
  });
}
