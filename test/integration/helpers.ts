/** Calls the real worker (inside workerd) the way an agent does, over HTTP. */
import { env, exports } from 'cloudflare:workers';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';
import * as z from 'zod';
import { and, count, eq } from 'drizzle-orm';
import { moodEntries, projects } from '../../drizzle/schema.ts';
import { issueApiKey } from '../../shared/auth/keys.ts';
import { ok, type ToolResult } from '../../shared/core/contract.ts';
import { defineTool, READ_ONLY, type AnyTool } from '../../shared/core/tool.ts';
import { createGateway } from '../../shared/http/app.ts';
import { createDb } from '../../shared/runtime/db.ts';
import { linksFromEnv } from '../../shared/runtime/link-templates.ts';

/** The links a tool's context gets by default (this API's read routes), for tests that run execute directly. */
export const defaultLinks = (() => {
  const made = linksFromEnv({}, 'http://edge-tools.test');
  if (!made.ok) throw new Error(made.error.message);
  return made.links;
})();

export const tenantA = env.TEST_PROJECTS.tenantA;
export const tenantB = env.TEST_PROJECTS.tenantB;
export const tenantC = env.TEST_PROJECTS.tenantC;

export interface CallOptions {
  key?: string | null;
  contentType?: string;
  headers?: Record<string, string>;
  /** Sent as is instead of JSON.stringify(body). */
  rawBody?: BodyInit;
  /** Another worker to call instead of the gateway (e.g. a per-tool worker). */
  worker?: { fetch(request: Request, env: Cloudflare.Env, ctx: ExecutionContext): Response | Promise<Response> };
  path?: string;
}

export interface Answer<T = unknown> {
  status: number;
  body: ToolResult<T>;
}

/** POSTs a tool call and returns the status and the parsed envelope. */
export async function callTool<T = Record<string, unknown>>(toolId: string, body: unknown, options: CallOptions = {}): Promise<Answer<T>> {
  const key = options.key === undefined ? tenantA.apiKey : options.key;
  const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/json', ...options.headers };
  if (key !== null && !('authorization' in headers)) headers.authorization = `Bearer ${key}`;
  const request = new Request(`http://edge-tools.test${options.path ?? `/tools/${toolId}`}`, {
    method: 'POST',
    headers,
    body: options.rawBody ?? JSON.stringify(body),
  });
  return answerOf<T>(await send(request, options.worker));
}

/** GETs a route (with `key` as the bearer token, when given) and returns the status and the parsed envelope. */
export async function getJson<T = unknown>(path: string, key?: string): Promise<Answer<T>> {
  return answerOf<T>(await send(new Request(`http://edge-tools.test${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} })));
}

/**
 * Sends a request to the gateway (or to `worker`, with the lane's variables or `workerEnv`),
 * waiting for its `waitUntil` work when a worker is given.
 */
export async function send(request: Request, worker?: CallOptions['worker'], workerEnv: object = env): Promise<Response> {
  if (!worker) return exports.default.fetch(request);
  const { createExecutionContext, waitOnExecutionContext } = await import('cloudflare:test');
  const ctx = createExecutionContext();
  const response = await worker.fetch(request, workerEnv as Cloudflare.Env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

async function answerOf<T>(response: Response): Promise<Answer<T>> {
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as ToolResult<T> };
}

/** The length of `text` in OpenAI's o200k_base tokens, counted by js-tiktoken in Node (test/setup/token-counter.ts). */
export async function countTokens(text: string): Promise<number> {
  const response = await fetch(env.TEST_SERVICES.tokenCounterUrl, { method: 'POST', body: text });
  if (!response.ok) throw new Error(`The token counter answered ${response.status}`);
  return ((await response.json()) as { tokens: number }).tokens;
}

/** An answer of {@link postJsonRpc}: the status, the headers and the JSON-RPC body as sent. */
export interface JsonRpcAnswer {
  status: number;
  headers: Headers;
  body: { result?: any; error?: { code: number; message: string; data?: unknown } };
}

let jsonRpcId = 1;

/**
 * POSTs one JSON-RPC message (an `id` added) to the gateway's MCP endpoint `path` (default `/mcp`)
 * with `key` (tenant A's unless given) and extra `headers` (the protocol version, `mcp-method`…),
 * as an MCP client sends it without the SDK.
 */
export async function postJsonRpc(
  message: Record<string, unknown>,
  { path = '/mcp', key = tenantA.apiKey, headers = {} }: { path?: string; key?: string; headers?: Record<string, string> } = {},
): Promise<JsonRpcAnswer> {
  const response = await send(
    new Request(`http://edge-tools.test${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: jsonRpcId++, ...message }),
    }),
  );
  return { status: response.status, headers: response.headers, body: (await response.json()) as JsonRpcAnswer['body'] };
}

/** A database client for assertions on what was (or was not) written. */
export const db = createDb(env.DATABASE_URL!);

/** Options of {@link createKey}. */
export interface KeyOptions {
  /** The toolsets the key may list and run; null (the default) for every toolset. */
  toolsets?: string[] | null;
  /** The key's label (`api_keys.name`, shown in traces); default 'test key'. */
  name?: string;
  /** The key itself; a new signed one unless given (a given key works as an unsigned one). */
  key?: string;
}

/**
 * Stores an API key of `projectId` as `npm run keys -- create` does (its SHA-256 and its prefix,
 * never the key) and answers the key and its row id. A test that revokes or narrows a key, or
 * spends its rate limit, makes its own so that no other test's key changes.
 */
export async function createKey(
  projectId: string,
  { toolsets = null, name = 'test key', key }: KeyOptions = {},
): Promise<{ key: string; id: string }> {
  return issueApiKey(db, { projectId, name, toolsets, ...(key && { key }) });
}

/** A key of the right form that no project has (unsigned, as a guess would be). */
export function unknownKey(): string {
  return `et_${crypto.randomUUID().replace(/-/g, '')}${crypto.randomUUID().replace(/-/g, '').slice(0, 11)}`;
}

/** How many mood entries `userId` has in `projectId`: the rows a log-mood call writes, read straight from the database. */
export async function moodRows(projectId: string, userId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(moodEntries)
    .where(and(eq(moodEntries.projectId, projectId), eq(moodEntries.userId, userId)));
  return row!.n;
}

/**
 * A project of the test's own (a tenant nobody else writes to, so counts in it are exact whatever
 * runs alongside), named `name` and a random suffix; answers its id.
 */
export async function createProject(name: string, { rateLimitPerMinute }: { rateLimitPerMinute?: number } = {}): Promise<string> {
  const [project] = await db
    .insert(projects)
    .values({ name: `${name} ${crypto.randomUUID()}`, rateLimitPerMinute })
    .returning({ id: projects.id });
  return project!.id;
}

/** A tenant of the test's own: {@link createProject} with one key (labelled `<name> key` unless `key.name` says otherwise). */
export async function createTenant(
  name: string,
  { rateLimitPerMinute, key: keyOptions = {} }: { rateLimitPerMinute?: number; key?: KeyOptions } = {},
): Promise<{ projectId: string; apiKey: string; keyId: string }> {
  const projectId = await createProject(name, { rateLimitPerMinute });
  const { key, id } = await createKey(projectId, { name: `${name} key`, ...keyOptions });
  return { projectId, apiKey: key, keyId: id };
}

/** A timestamp no other test uses, so unique constraints never collide across tests. */
let clock = Date.UTC(2030, 0, 1);
export function uniqueTimestamp(): string {
  clock += 60_000;
  return new Date(clock).toISOString().replace('.000Z', 'Z');
}

/**
 * A read-only tool ('hold') that holds its execution slot for `hold_ms`, or with `gated` until the
 * test calls `state.release()`, and records each execution's trace id and how many overlapped.
 * Never stopped by its signal: a tool that started finishes.
 */
export function holdingTool() {
  const gates: (() => void)[] = [];
  const state = { running: 0, maxRunning: 0, started: [] as string[], release: () => gates.splice(0).forEach((open) => open()) };
  const tool = defineTool({
    id: 'hold',
    toolset: 'documents',
    title: 'Test tool hold',
    annotations: READ_ONLY,
    description: 'Holds an execution slot for a while.',
    input: z.strictObject({ hold_ms: z.int().min(0).max(20_000), gated: z.boolean().optional() }),
    output: z.object({ held_ms: z.int() }),
    example: { hold_ms: 10 },
    async execute({ hold_ms, gated }, { traceId }) {
      state.started.push(traceId);
      state.maxRunning = Math.max(state.maxRunning, ++state.running);
      await new Promise<void>((resolve) => (gated ? gates.push(resolve) : setTimeout(resolve, hold_ms)));
      state.running--;
      return ok({ held_ms: hold_ms }, `Held ${hold_ms} ms.`);
    },
  });
  return { tool, state };
}

/**
 * A write tool ('gated-write') that runs until the test opens its gate, with a gateway serving it:
 * a call stays in flight as long as the test wants. `started(n)` resolves once n executions began.
 */
export function gatedTool() {
  const state = { started: 0, gates: [] as (() => void)[] };
  const tool = defineTool({
    id: 'gated-write',
    toolset: 'documents',
    title: 'Gated write',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    description: 'Waits for the test, then answers which execution it was.',
    input: z.strictObject({ value: z.int() }),
    output: z.object({ execution: z.int() }),
    example: { value: 1 },
    async execute() {
      const execution = ++state.started;
      await new Promise<void>((resolve) => state.gates.push(resolve));
      return ok({ execution }, `Execution ${execution}.`);
    },
  });
  const gateway = createGateway([tool as AnyTool], { retryDelayMs: 10 });
  const started = async (n: number) => {
    while (state.started < n) await new Promise((resolve) => setTimeout(resolve, 5));
  };
  return { gateway, state, started, open: () => state.gates.splice(0).forEach((open) => open()) };
}

const mcpClients: Client[] = [];

/**
 * The official MCP SDK's client, connected to the gateway's `path` (e.g. `/mcp/study`) with `key`.
 * Files that connect call {@link closeMcpClients} after each test.
 */
export async function connectMcp(path: string, key: string = tenantA.apiKey): Promise<Client> {
  // The SDK's default validator (Ajv) generates code, which workerd forbids.
  const client = new Client({ name: 'edge-tools-test', version: '1.0.0' }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://edge-tools.test${path}`), {
      fetch: (input, init) => send(new Request(input, init)),
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  mcpClients.push(client);
  return client;
}

/** Closes every client {@link connectMcp} opened. */
export async function closeMcpClients(): Promise<void> {
  await Promise.all(mcpClients.splice(0).map((client) => client.close()));
}
