/**
 * What the MCP tests share: the official clients of both SDK generations connected to the worker's
 * /mcp in workerd (the transports' fetch calls the worker directly), v1 (`@modelcontextprotocol/sdk`,
 * which speaks 2025-11-25 through `initialize`) and v2 (`@modelcontextprotocol/client`, pinned to
 * 2026-07-28: no `initialize`, the version and capabilities in every request's `_meta`), and readers
 * of their answers. The mcp-*.test.ts files run their suites with each generation (`SDKS`).
 */
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { expect } from 'vitest';
import { tools } from '../../functions/registry.ts';
import { createGateway } from '../../shared/http/app.ts';
import type { ToolResult } from '../../shared/core/contract.ts';
import { send, tenantA, type CallOptions } from './helpers.ts';

/** A worker to send requests to: the gateway, or one built by the test. */
export type Worker = NonNullable<CallOptions['worker']>;

/** The SDK generations the suites run with, and the protocol version each speaks. */
export const SDKS = [
  { name: 'SDK v1 client, 2025-11-25', sdk: 'v1', protocolVersion: '2025-11-25' },
  { name: 'SDK v2 client, 2026-07-28', sdk: 'v2', protocolVersion: '2026-07-28' },
] as const;
/** One SDK generation. */
export type Sdk = (typeof SDKS)[number]['sdk'];

/** How {@link connectWith} connects. */
export interface ConnectOptions {
  key?: string | null;
  headers?: Record<string, string>;
  /** Default: the gateway (`exports.default`). */
  worker?: Worker;
  url?: string;
}

/** What the tests use of either generation's client. */
export type McpClient = Pick<
  ClientV2,
  'listTools' | 'callTool' | 'close' | 'getServerVersion' | 'getServerCapabilities' | 'getInstructions'
>;
/** The answer of a tools/call. */
export type CallResult = Awaited<ReturnType<ClientV2['callTool']>>;

const clients: McpClient[] = [];
/** The protocol version each client settled on: v1's transport keeps it, v2's client says it. */
export const negotiated = new WeakMap<McpClient, string | undefined>();

/** Closes every client {@link connectWith} opened: files that connect call it after each test. */
export async function closeClients(): Promise<void> {
  await Promise.all(clients.splice(0).map((client) => client.close()));
}

/** A client of the `sdk` generation connected to the worker's /mcp (initialized, on v1). */
export async function connectWith(
  sdk: Sdk,
  { key = tenantA.apiKey, headers = {}, worker, url = 'http://edge-tools.test/mcp' }: ConnectOptions = {},
): Promise<McpClient> {
  const options = {
    fetch: (input: string | URL | Request, init?: RequestInit) => send(new Request(input, init), worker),
    requestInit: { headers: { ...(key === null ? {} : { authorization: `Bearer ${key}` }), ...headers } },
  };
  let client: McpClient;
  if (sdk === 'v1') {
    // v1's default validator (Ajv) generates code, which workerd forbids.
    const v1 = new ClientV1({ name: 'edge-tools-test', version: '1.0.0' }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    const transport = new TransportV1(new URL(url), options);
    await v1.connect(transport);
    client = v1 as unknown as McpClient;
    negotiated.set(client, transport.protocolVersion);
  } else {
    const v2 = new ClientV2({ name: 'edge-tools-test', version: '2.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await v2.connect(new TransportV2(new URL(url), options));
    client = v2;
    negotiated.set(client, v2.getNegotiatedProtocolVersion());
  }
  clients.push(client);
  return client;
}

/**
 * Connecting (or calling) with the `sdk` generation fails with the HTTP `status` of the refusal.
 * The v1 client puts the body (the envelope, naming `code`) in its error's message; v2's error
 * carries the status alone.
 */
export async function expectRefusedWith(sdk: Sdk, connecting: Promise<unknown>, status: number, code: string): Promise<void> {
  const error = await connecting.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (sdk === 'v1') expect(error).toMatchObject({ code: status, message: expect.stringContaining(code) });
  else expect((error as { status?: number }).status).toBe(status);
}

/** The envelope of a tools/call answer (its structuredContent). */
export function envelopeOf(result: CallResult): ToolResult<Record<string, unknown>> {
  return result.structuredContent as unknown as ToolResult<Record<string, unknown>>;
}

/** The text parts of a tools/call answer, joined. */
export function textOf(result: CallResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

/** The gateway with extra variables, as a worker. */
export function gatewayWith(vars: Record<string, string>): Worker {
  const gateway = createGateway(tools);
  return { fetch: (request, env, ctx) => gateway.fetch(request, { ...env, ...vars }, ctx) };
}
