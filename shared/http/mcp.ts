/**
 * MCP (Model Context Protocol) on `POST /mcp`: the endpoint. It refuses what the protocol's server
 * should never see, then hands the request to the MCP server (shared/http/mcp-server.ts, the
 * official SDK), which it loads, SDK included, on the first request it serves.
 *
 * - Same API keys as HTTP: `Authorization: Bearer <key>`, or an OAuth access token issued for this
 *   URL (shared/auth/oauth.ts), checked before the body is read. Credentials are only checked
 *   against this server's own records, never forwarded anywhere (no token passthrough).
 * - With `PUBLIC_TOOL_LIST=true` (off by default), a request without a credential whose messages
 *   only list (`initialize`, `server/discover`, `tools/list`, `ping` and notifications) is answered
 *   too, with every tool a credential could reach at this URL: registries and "mixed auth" clients
 *   read the list before they authorise. Anything else without a credential, any `tools/call`
 *   above all, is refused as always (401, and the OAuth challenge where OAuth is on).
 * - `Origin` is validated against DNS rebinding: see {@link isAllowedOrigin}.
 * - Stateless: POST only, no sessions, no server-to-client stream.
 *
 * Why the server is loaded on first use: the SDK's module scope builds every protocol schema, most
 * of what loading the gateway cost (bench/RESULTS.md, "Cold start in workerd"), and no other route
 * needs it. wrangler's esbuild bundles without code splitting, so the `import()` below stays in the
 * one bundle and every module reachable from it becomes lazily initialised, initialised by the
 * eager code that imports it too. The module loaded is ours, not the SDK's entry, on purpose: its
 * imports reach zod through zod's main entry, as the rest of the code does, which makes esbuild
 * initialise that entry's modules for the eager code; loading the SDK alone reached zod through
 * `zod/v4` only, esbuild skipped the main entry's initialisers (zod declares itself free of side
 * effects), and the gateway failed at load (`ZodEnum is not a constructor`).
 */
import { cors } from 'hono/cors';
import { fail, metaWithoutExecution, type Failure } from '../core/contract.ts';
import type { AnyTool } from '../core/tool.ts';
import { deniedToolsets, type Caller } from '../auth/caller.ts';
import type { Env, RequestScope } from '../runtime/env.ts';
import { DEFAULT_BODY_LIMIT_BYTES, readBody } from '../core/body.ts';
import { respond } from './base.ts';
import type { McpServer } from './mcp-server.ts';
import type { Served } from './tool-route.ts';

/** The variables MCP reads (see {@link Env}). */
type McpEnv = Pick<Env, 'MCP_ALLOWED_ORIGINS' | 'PUBLIC_TOOL_LIST'>;

/** The JSON-RPC methods a request without a credential may send when the tool list is public. */
export const LISTING_METHODS: ReadonlySet<string> = new Set(['initialize', 'server/discover', 'tools/list', 'ping']);

/** Answers an MCP request (any method) for `tools`. */
export type McpHandler = (request: Request, scope: RequestScope) => Promise<Response>;

/**
 * The `/mcp` endpoint serving `tools` (through the server `load` gives, when given). Pipeline options (body limit, retries, ...) are those of
 * the HTTP routes.
 *
 * @example
 * const mcp = createMcpHandler(tools, served({}));
 * app.all('/mcp', (c) => mcp(c.req.raw, { env: c.env, waitUntil: (p) => c.executionCtx.waitUntil(p) }));
 */
export function createMcpHandler(
  tools: readonly AnyTool[],
  options: Served,
  load: () => Promise<McpServer> = () => import('./mcp-server.ts').then(({ createMcpServer }) => createMcpServer(tools, options)),
): McpHandler {
  const toolsets = [...new Set(tools.map((tool) => tool.toolset))];
  const bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  let server: Promise<McpServer> | undefined;
  /** The MCP server (by default that of `tools`; `load` may give another, e.g. code mode's), loaded once (again after a failed load). */
  const loadServer = () =>
    (server ??= load().then(
      (loaded) => loaded,
      (error: unknown) => {
        server = undefined;
        throw error;
      },
    ));

  return async (request, scope) => {
    const { env } = scope;
    const origin = request.headers.get('origin');
    if (origin !== null && !isAllowedOrigin(origin, request.url, env)) return refuse(forbiddenOrigin(origin));
    if (request.method !== 'POST') return refuse(noStream(request.method), { allow: 'POST' });

    // Read first only when it may be a public listing; otherwise credentials come before the body.
    let read: Awaited<ReturnType<typeof readBody>> | undefined;
    if (!request.headers.has('authorization') && publicToolList(env)) {
      read = await readBody(request, bodyLimitBytes);
      if (!read.ok) return refuse(read);
      if (onlyLists(read.value)) return (await loadServer())({ request, scope, gate: undefined, body: read.value });
    }
    const gate = await options.authorize(request, scope);
    if (!gate.ok) return refuse(gate);
    // A URL serving none of the credential's toolsets is refused whole, rather than listing nothing.
    const outside = (caller: Caller) => deniedToolsets(caller, toolsets, `the MCP URL ${new URL(request.url).pathname}`);
    if (outside(gate.caller)) {
      const confirmed = await gate.confirm(outside);
      if ('error' in confirmed) return refuse(confirmed);
    }
    const body = read ?? (await readBody(request, bodyLimitBytes));
    if (!body.ok) return refuse(body);
    return (await loadServer())({ request, scope, gate, body: body.value });
  };
}

/** Whether the deployment lists its tools without a credential (`PUBLIC_TOOL_LIST=true`). */
export function publicToolList(env: McpEnv): boolean {
  return env.PUBLIC_TOOL_LIST?.trim().toLowerCase() === 'true';
}

/**
 * Whether a JSON-RPC body (one message or a batch) only lists: every message is a notification
 * (no id, so no answer beyond an acknowledgement) or a request for one of {@link LISTING_METHODS}.
 * Anything unreadable is not: it goes the way of every request without a credential.
 */
function onlyLists(body: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return false;
  }
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  return (
    messages.length > 0 &&
    messages.every((message) => {
      if (typeof message !== 'object' || message === null) return false;
      const { method } = message as { method?: unknown };
      return typeof method === 'string' && (LISTING_METHODS.has(method) || method.startsWith('notifications/'));
    })
  );
}

/**
 * CORS for `/mcp`, so that browser clients on an allowed origin (see {@link McpEnv}) can call it.
 * Other origins get no CORS headers, and their requests are refused by the handler.
 */
export function mcpCors() {
  return cors({
    origin: (origin, c) => (isAllowedOrigin(origin, c.req.url, c.env as McpEnv) ? origin : null),
    allowMethods: ['POST'],
    allowHeaders: [
      'Authorization',
      'Content-Type',
      'Accept',
      'Mcp-Protocol-Version',
      'Mcp-Method',
      'Mcp-Name',
      'Mcp-Session-Id',
      'Last-Event-ID',
      'traceparent',
      'Tool-Call-Id',
    ],
    exposeHeaders: ['Mcp-Session-Id', 'WWW-Authenticate'],
    maxAge: 600,
  });
}

/**
 * May a browser page on `origin` use MCP on the server at `requestUrl`? DNS-rebinding protection,
 * per the MCP specification's security guidance: only origins listed in `MCP_ALLOWED_ORIGINS` (or
 * any, with `*`), and, when the server is addressed on loopback (local development), pages that are
 * on loopback too. A rebinding page is addressed by its own name, never by a loopback one, so it
 * is refused even locally. Requests without an `Origin` header do not come from a browser page and
 * are not subject to this check.
 */
export function isAllowedOrigin(origin: string, requestUrl: string, env: McpEnv): boolean {
  const normalized = normalizeOrigin(origin);
  const allowed = (env.MCP_ALLOWED_ORIGINS ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map(normalizeOrigin);
  if (allowed.includes('*') || allowed.includes(normalized)) return true;
  return URL.canParse(origin) && isLoopback(new URL(origin).hostname) && isLoopback(new URL(requestUrl).hostname);
}

function normalizeOrigin(origin: string): string {
  return URL.canParse(origin) ? new URL(origin).origin : origin;
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost') || hostname === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(hostname);
}

function forbiddenOrigin(origin: string): Failure {
  return fail('PERMISSION_DENIED', `Browser pages on the origin '${origin.slice(0, 100)}' may not use this MCP server.`, {
    hint: 'Agents calling from a server send no Origin header. To allow a browser app, the operator adds its origin to MCP_ALLOWED_ORIGINS (comma-separated).',
    details: { reason: 'origin_not_allowed' },
  });
}

function noStream(method: string): Failure {
  return fail(
    'METHOD_NOT_ALLOWED',
    `${method} is not allowed on /mcp: this MCP server is stateless, so it keeps no sessions and offers no server-to-client stream; it answers POST only.`,
    {
      hint: 'Send every JSON-RPC message with POST /mcp (Content-Type: application/json, Accept: application/json, text/event-stream).',
      details: { allowed_methods: ['POST'] },
    },
  );
}

function refuse(failure: Failure, headers: Record<string, string> = {}): Response {
  const response = respond(failure, metaWithoutExecution('mcp'));
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}
