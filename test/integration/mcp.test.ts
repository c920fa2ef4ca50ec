/**
 * MCP over Streamable HTTP against the worker in workerd (the transports' fetch calls the worker
 * directly), driven by the official clients of both SDK generations: v1 (`@modelcontextprotocol/sdk`,
 * which speaks 2025-11-25 through `initialize`) and v2 (`@modelcontextprotocol/client`, pinned to
 * 2026-07-28: no `initialize`, the version and capabilities in every request's `_meta`). The same
 * suite runs with each; the wire-level tests at the end check each protocol version by hand.
 */
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';
import { Validator, type Schema } from '@cfworker/json-schema';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { eq, sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { toolExecutions } from '../../drizzle/schema.ts';
import { tools } from '../../functions/registry.ts';
import { createGateway } from '../../shared/http/app.ts';
import { withOAuth } from '../../shared/http/oauth.ts';
import type { ToolResult } from '../../shared/core/contract.ts';
import logMood from '../../functions/table-tools/log-mood.ts';
import { unadmittedFields } from '../support/envelope.ts';
import { db, gatedTool, postJsonRpc, send, tenantA, tenantB, uniqueTimestamp, type CallOptions } from './helpers.ts';

type Worker = NonNullable<CallOptions['worker']>;

/** The SDK generations the suite runs with, and the protocol version each speaks. */
const SDKS = [
  { name: 'SDK v1 client, 2025-11-25', sdk: 'v1', protocolVersion: '2025-11-25' },
  { name: 'SDK v2 client, 2026-07-28', sdk: 'v2', protocolVersion: '2026-07-28' },
] as const;
type Sdk = (typeof SDKS)[number]['sdk'];

interface ConnectOptions {
  key?: string | null;
  headers?: Record<string, string>;
  /** Default: the gateway (`exports.default`). */
  worker?: Worker;
  url?: string;
}

/** What the tests use of either generation's client. */
type McpClient = Pick<ClientV2, 'listTools' | 'callTool' | 'close' | 'getServerVersion' | 'getServerCapabilities' | 'getInstructions'>;
type CallResult = Awaited<ReturnType<ClientV2['callTool']>>;

const clients: McpClient[] = [];
/** The protocol version each client settled on: v1's transport keeps it, v2's client says it. */
const negotiated = new WeakMap<McpClient, string | undefined>();
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** A client of the `sdk` generation connected to the worker's /mcp (initialized, on v1). */
async function connectWith(
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

function envelopeOf(result: CallResult): ToolResult<Record<string, unknown>> {
  return result.structuredContent as unknown as ToolResult<Record<string, unknown>>;
}

function textOf(result: CallResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

/** The gateway with extra variables, as a worker. */
function gatewayWith(vars: Record<string, string>): Worker {
  const gateway = createGateway(tools);
  return { fetch: (request, env, ctx) => gateway.fetch(request, { ...env, ...vars }, ctx) };
}

describe.each(SDKS)('$name', ({ sdk, protocolVersion }) => {
  const connect = (options?: ConnectOptions) => connectWith(sdk, options);
  /**
   * Connecting fails with the HTTP `status` of the refusal. The v1 client puts the body (the
   * envelope, naming `code`) in its error's message; v2's error carries the status alone.
   */
  const expectRefused = async (connecting: Promise<unknown>, status: number, code: string) => {
    const error = await connecting.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    if (sdk === 'v1') expect(error).toMatchObject({ code: status, message: expect.stringContaining(code) });
    else expect((error as { status?: number }).status).toBe(status);
  };

  describe('MCP: public listing (PUBLIC_TOOL_LIST)', () => {
    // The deployed gateway (OAuth in front), with the setting on.
    const publicList = (() => {
      const gateway = withOAuth(createGateway(tools));
      return { fetch: (request, env, ctx) => gateway.fetch(request, { ...env, PUBLIC_TOOL_LIST: 'true' }, ctx) } satisfies Worker;
    })();

    it('is off by default: without a credential the client cannot even connect', async () => {
      await expectRefused(connect({ key: null }), 401, 'UNAUTHENTICATED');
    });

    it('on: a client without a credential connects and lists every tool of the URL, but no call runs', async () => {
      const client = await connect({ key: null, worker: publicList });
      expect(client.getServerVersion()).toMatchObject({ name: 'edge-tools' });
      const { tools: listed } = await client.listTools();
      expect(listed.map((tool) => tool.name)).toEqual(tools.map((tool) => tool.id));
      // Other files run beside this one: only executions of this call's input could be this call's.
      const traced = () =>
        db
          .select({ n: sql<number>`count(*)::int` })
          .from(toolExecutions)
          .where(sql`${toolExecutions.input}->>'user_id' = 'public-list'`);
      const before = await traced();
      await expectRefused(
        client.callTool({ name: 'log-mood', arguments: { ...logMood.example, user_id: 'public-list' } }),
        401,
        'UNAUTHENTICATED',
      );
      // Nothing ran: no execution was traced, no row written.
      expect(await traced()).toEqual(before);
      const rows = await db.execute(sql`select count(*)::int as n from mood_entries where user_id = 'public-list'`);
      expect(rows.rows[0]).toEqual({ n: 0 });
    });

    it('on: a toolset URL lists that toolset, and a credential still gets its own list', async () => {
      const client = await connect({ key: null, worker: publicList, url: 'http://edge-tools.test/mcp/study' });
      const { tools: listed } = await client.listTools();
      expect(listed.map((tool) => tool.name)).toEqual(tools.filter((tool) => tool.toolset === 'study').map((tool) => tool.id));
      const keyed = await connect({ worker: publicList });
      expect((await keyed.listTools()).tools).toHaveLength(tools.length);
    });
  });

  describe('MCP: session', () => {
    it('connects, statelessly, and names the server, its tools capability and the protocol version', async () => {
      const client = await connect();
      expect(negotiated.get(client)).toBe(protocolVersion);
      expect(client.getServerVersion()).toMatchObject({ name: 'edge-tools' });
      expect(client.getServerCapabilities()).toMatchObject({ tools: {} });
      expect(client.getInstructions()).toContain('structuredContent');
    });

    it('answers GET /mcp with 405: there is no server-to-client stream', async () => {
      const response = await send(
        new Request('http://edge-tools.test/mcp', { headers: { accept: 'text/event-stream', authorization: `Bearer ${tenantA.apiKey}` } }),
      );
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    });
  });

  describe('MCP: tools/list', () => {
    it('advertises every tool with its description and the schemas the validator enforces', async () => {
      const { tools: listed } = await (await connect()).listTools();
      expect(listed.map((entry) => entry.name)).toEqual(tools.map((tool) => tool.id));
      // Judged by a standard JSON Schema validator (draft 2020-12), not by the code that generates the schemas.
      const judge = (schema: unknown, value: unknown) => new Validator(schema as Schema, '2020-12', false).validate(value).valid;
      for (const entry of listed) {
        const tool = tools.find((candidate) => candidate.id === entry.name)!;
        // The idempotency note is said once, in the server's instructions, not in every description.
        expect(entry.description).toBe(tool.purpose);
        expect(
          unadmittedFields(entry.inputSchema, Object.fromEntries(Object.keys(tool.input.shape).map((field) => [field, null]))),
          entry.name,
        ).toEqual([]);
        expect(judge(entry.inputSchema, tool.example), entry.name).toBe(true);
        expect(judge(entry.inputSchema, { ...tool.example, not_a_field: 1 }), entry.name).toBe(false);
        // No outputSchema: structuredContent is the envelope the server's instructions describe once.
        expect(entry.outputSchema, entry.name).toBeUndefined();
      }
      // One tool's schema against what its definition says in words, written out by hand.
      const mood = listed.find((entry) => entry.name === 'log-mood')!.inputSchema as Record<string, any>;
      expect(mood).toMatchObject({ type: 'object', additionalProperties: false });
      expect([...mood.required].sort()).toEqual(['energy_level', 'mood', 'timestamp', 'user_id']);
      expect(mood.properties.mood.enum).toEqual(['happy', 'sad', 'neutral', 'anxious']);
      expect(mood.properties.energy_level).toMatchObject({ type: 'integer', minimum: 1, maximum: 10 });
    });

    it('gives every tool a human title and truthful annotations', async () => {
      const { tools: listed } = await (await connect()).listTools();
      const byName = new Map(listed.map((entry) => [entry.name, entry]));
      for (const tool of tools) {
        const entry = byName.get(tool.id)!;
        expect(entry.title).toBe(tool.title);
        // Every hint is stated, none left to the specification's defaults: some clients do not apply
        // them before deciding whether to ask the person.
        expect(Object.keys(entry.annotations ?? {}).sort()).toEqual(['destructiveHint', 'idempotentHint', 'openWorldHint', 'readOnlyHint']);
        if (tool.annotations.readOnlyHint)
          expect(entry.annotations).toEqual({
            readOnlyHint: true,
            destructiveHint: false,
            idempotentHint: true,
            openWorldHint: tool.annotations.openWorldHint,
          });
        else expect(entry.annotations).toEqual(tool.annotations);
      }
      // Spot checks of the facts themselves, not of the code that copies them.
      const of = (name: string) => byName.get(name)!.annotations;
      expect(of('semantic-search')).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      expect(of('delete-document')).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
      expect(of('add-document')).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
      expect(of('log-mood')).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    });

    it('carries enums, bounds, required fields and descriptions', async () => {
      const { tools: listed } = await (await connect()).listTools();
      const schema = listed.find((entry) => entry.name === 'log-mood')!.inputSchema;
      expect(schema).toMatchObject({
        required: ['user_id', 'mood', 'energy_level', 'timestamp'],
        additionalProperties: false,
        properties: {
          mood: { enum: ['happy', 'sad', 'neutral', 'anxious'] },
          energy_level: { type: 'integer', minimum: 1, maximum: 10, description: expect.stringContaining('full of energy') },
          user_id: { maxLength: 100 },
          // A ceiling of 500 characters and more is stated too: learnt from the list, not from a refusal.
          notes: { anyOf: [{ type: 'string', maxLength: 500 }, { type: 'null' }] },
        },
      });
      // No reference, no definitions, no empty entry left in a list (allOf: [{}]), in any tool's schema.
      for (const entry of listed) expect(JSON.stringify(entry.inputSchema), entry.name).not.toMatch(/"\$(ref|defs)"|\[\{\}|,\{\}[,\]]/);
    });
  });

  describe('MCP: tools/call', () => {
    it('runs a valid call through the pipeline; structuredContent is the envelope, content the short text', async () => {
      const gateway = createGateway(tools); // through send(), so the trace is written before we look
      const client = await connect({ worker: gateway });
      // Its own user id: other files' uniqueTimestamp() runs over the same instants.
      const input = { ...logMood.example, user_id: 'mcp-test', timestamp: uniqueTimestamp() };
      const result = await client.callTool({ name: 'log-mood', arguments: input });
      expect(result.isError).toBe(false);
      const envelope = envelopeOf(result);
      expect(envelope).toMatchObject({ success: true, data: { row_count: 1 }, meta: { tool: 'log-mood', attempts: 1 } });
      expect(textOf(result)).toContain(`Logged mood entry for mcp-test at ${input.timestamp}`);
      expect(textOf(result)).toContain('"row_count":1');
      const [trace] = await db.select().from(toolExecutions).where(eq(toolExecutions.id, envelope.meta.trace_id));
      expect(trace).toMatchObject({ tool: 'log-mood', status: 'success', projectId: tenantA.projectId });
    });

    it('answers invalid input with isError and one field error per problem, never a JSON-RPC error', async () => {
      const result = await (
        await connect()
      ).callTool({ name: 'log-mood', arguments: { ...logMood.example, energy_level: 15, mood: 'excited' } });
      expect(result.isError).toBe(true);
      expect(envelopeOf(result)).toMatchObject({
        success: false,
        error: {
          code: 'VALIDATION_ERROR',
          retryable: false,
          details: {
            fields: [
              { field: 'mood', code: 'invalid_value' },
              { field: 'energy_level', code: 'too_big' },
            ],
          },
        },
        meta: { tool: 'log-mood', attempts: 0 },
      });
      const text = textOf(result);
      expect(text).toContain("VALIDATION_ERROR: The input has 2 problems: Field 'mood' must be one of: happy, sad, neutral, anxious");
      expect(text).toContain('Hint: Example of a valid call: {');
      expect(text).toContain('Retryable: no.');
    });

    it('answers missing arguments with the missing fields', async () => {
      const result = await (await connect()).callTool({ name: 'log-mood' });
      expect(result.isError).toBe(true);
      expect(envelopeOf(result)).toMatchObject({
        error: {
          code: 'VALIDATION_ERROR',
          details: {
            fields: expect.arrayContaining([{ field: 'user_id', code: 'required', expected: 'a string', message: expect.any(String) }]),
          },
        },
      });
    });

    it('reads null for an optional field as absent: its default applies', async () => {
      // depth, limit, direction have defaults and are not nullable: null passes validation, and the
      // call reaches the database (which has no such task).
      const result = await (
        await connect()
      ).callTool({
        name: 'query-task-graph',
        arguments: { task_id: crypto.randomUUID(), depth: null, limit: null, direction: null, relationship_type: null },
      });
      expect(envelopeOf(result)).toMatchObject({ success: false, error: { code: 'NOT_FOUND' }, meta: { attempts: 1 } });
    });

    it('refuses forbidden keys in the arguments as sent, as HTTP does', async () => {
      const result = await (
        await connect()
      ).callTool({ name: 'log-mood', arguments: JSON.parse('{"__proto__": {"user_id": "x"}}') as Record<string, unknown> });
      expect(result.isError).toBe(true);
      expect(envelopeOf(result)).toMatchObject({
        error: { code: 'VALIDATION_ERROR', details: { fields: [{ code: 'forbidden_key', field: '__proto__' }] } },
      });
    });

    it('answers an unknown tool with isError and the list of tools', async () => {
      const result = await (await connect()).callTool({ name: 'no-such-tool', arguments: {} });
      expect(result.isError).toBe(true);
      expect(envelopeOf(result)).toMatchObject({
        success: false,
        error: { code: 'UNKNOWN_TOOL', details: { available_tools: tools.map((tool) => tool.id) } },
      });
      for (const tool of tools) expect(textOf(result)).toContain(tool.id);
    });
  });

  describe('MCP: authentication and Origin', () => {
    it.each([
      ['no API key', null],
      ['an unknown API key', 'et_unknown'],
    ])('refuses %s with 401 before reading the request', async (_case, key) => {
      await expectRefused(connect({ key }), 401, 'UNAUTHENTICATED');
    });

    it('says how to authenticate in the 401', async () => {
      const response = await send(
        new Request('http://edge-tools.test/mcp', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: '{}',
        }),
      );
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(await response.json()).toMatchObject({
        success: false,
        error: { code: 'UNAUTHENTICATED', hint: expect.stringContaining('Authorization: Bearer') },
      });
    });

    it('refuses a browser Origin that is not allowed with 403 (DNS-rebinding protection)', async () => {
      await expectRefused(connect({ headers: { origin: 'https://evil.example' } }), 403, 'PERMISSION_DENIED');
    });

    it('accepts origins listed in MCP_ALLOWED_ORIGINS, with CORS headers', async () => {
      const worker = gatewayWith({ MCP_ALLOWED_ORIGINS: 'https://app.example, https://other.example' });
      const client = await connect({ worker, headers: { origin: 'https://app.example' } });
      expect((await client.listTools()).tools.length).toBe(tools.length);
      const preflight = await send(
        new Request('http://edge-tools.test/mcp', {
          method: 'OPTIONS',
          headers: {
            origin: 'https://app.example',
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
          },
        }),
        worker,
      );
      expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
      await expectRefused(connect({ worker, headers: { origin: 'https://evil.example' } }), 403, 'PERMISSION_DENIED');
    });

    it('accepts loopback origins only when the server itself is addressed on loopback (local development)', async () => {
      const headers = { origin: 'http://localhost:6274' };
      const client = await connect({ url: 'http://127.0.0.1:8787/mcp', headers });
      expect((await client.listTools()).tools.length).toBe(tools.length);
      await expectRefused(connect({ url: 'http://edge-tools.test/mcp', headers }), 403, 'PERMISSION_DENIED');
      // A rebinding page is addressed by its own name, even when that name resolves to loopback.
      await expectRefused(
        connect({ url: 'http://rebound.example:8787/mcp', headers: { origin: 'http://rebound.example:8787' } }),
        403,
        'PERMISSION_DENIED',
      );
    });
  });

  describe('MCP: idempotency key in _meta', () => {
    const IDEMPOTENCY = 'edge-tools/idempotency-key';
    const moodCall = (userId: string, key: unknown, overrides: Record<string, unknown> = {}) => ({
      name: 'log-mood',
      arguments: { user_id: userId, mood: 'happy', energy_level: 5, timestamp: timestampOf(userId), ...overrides },
      _meta: { [IDEMPOTENCY]: key },
    });
    const timestamps = new Map<string, string>();
    const timestampOf = (userId: string) => timestamps.get(userId) ?? timestamps.set(userId, uniqueTimestamp()).get(userId)!;
    const rows = async (userId: string) =>
      (await db.execute(sql`select count(*)::int as n from mood_entries where project_id = ${tenantA.projectId} and user_id = ${userId}`))
        .rows[0];

    it('replays the first answer for the same key and arguments, marked replayed, writing nothing', async () => {
      const client = await connect();
      const userId = `mcp_idem_${crypto.randomUUID().slice(0, 8)}`;
      const key = crypto.randomUUID();
      const first = envelopeOf(await client.callTool(moodCall(userId, key)));
      const again = envelopeOf(await client.callTool(moodCall(userId, key)));
      expect(first.success).toBe(true);
      expect(again).toMatchObject({
        success: true,
        data: first.success ? first.data : {},
        meta: { replayed: true, trace_id: first.meta.trace_id },
      });
      expect(await rows(userId)).toEqual({ n: 1 });
    });

    it('shares the key with HTTP: the same call sent once over each is one execution', async () => {
      const userId = `mcp_idem_${crypto.randomUUID().slice(0, 8)}`;
      const key = crypto.randomUUID();
      const call = moodCall(userId, key);
      const http = await send(
        new Request('http://edge-tools.test/tools/log-mood', {
          method: 'POST',
          headers: { authorization: `Bearer ${tenantA.apiKey}`, 'content-type': 'application/json', 'idempotency-key': `"${key}"` },
          body: JSON.stringify(call.arguments),
        }),
      );
      expect(http.status).toBe(200);
      const mcp = envelopeOf(await (await connect()).callTool(call));
      expect(mcp.meta.replayed).toBe(true);
      expect(await rows(userId)).toEqual({ n: 1 });
    });

    it('refuses the same key with other arguments: IDEMPOTENCY_MISMATCH', async () => {
      const client = await connect();
      const userId = `mcp_idem_${crypto.randomUUID().slice(0, 8)}`;
      const key = crypto.randomUUID();
      await client.callTool(moodCall(userId, key));
      const result = await client.callTool(moodCall(userId, key, { energy_level: 9 }));
      expect(result.isError).toBe(true);
      expect(envelopeOf(result)).toMatchObject({ success: false, error: { code: 'IDEMPOTENCY_MISMATCH', retryable: false } });
      expect(textOf(result)).toContain('IDEMPOTENCY_MISMATCH');
      expect(await rows(userId)).toEqual({ n: 1 });
    });

    it('answers CONFLICT, retryable, while the first call with the key still runs', async () => {
      const { gateway, started, open } = gatedTool();
      const client = await connect({ worker: gateway });
      const call = { name: 'gated-write', arguments: { value: 1 }, _meta: { [IDEMPOTENCY]: crypto.randomUUID() } };
      const first = client.callTool(call);
      await started(1);
      const concurrent = await client.callTool(call);
      expect(envelopeOf(concurrent)).toMatchObject({
        success: false,
        error: { code: 'CONFLICT', retryable: true, details: { reason: 'idempotency_key_in_use' } },
      });
      expect(textOf(concurrent)).toMatch(/Retryable: yes, after \d+ ms/);
      open();
      expect(envelopeOf(await first).success).toBe(true);
      expect(envelopeOf(await client.callTool(call)).meta.replayed).toBe(true);
    });

    it("keeps each project's keys apart: tenant B's same key and arguments is another call", async () => {
      const userId = `mcp_idem_${crypto.randomUUID().slice(0, 8)}`;
      const key = crypto.randomUUID();
      const a = envelopeOf(await (await connect()).callTool(moodCall(userId, key)));
      const b = envelopeOf(await (await connect({ key: tenantB.apiKey })).callTool(moodCall(userId, key)));
      expect(a.success && b.success).toBe(true);
      expect(b.meta.replayed).toBeUndefined();
      expect(await rows(userId)).toEqual({ n: 1 });
      const { rows: inB } = await db.execute(
        sql`select count(*)::int as n from mood_entries where project_id = ${tenantB.projectId} and user_id = ${userId}`,
      );
      expect(inB[0]).toEqual({ n: 1 });
    });

    it('refuses a key that is not a string of 1 to 255 printable ASCII characters', async () => {
      const client = await connect();
      for (const key of [42, '', 'k'.repeat(256)]) {
        const userId = `mcp_idem_${crypto.randomUUID().slice(0, 8)}`;
        const result = await client.callTool(moodCall(userId, key));
        expect(envelopeOf(result)).toMatchObject({
          success: false,
          error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: `_meta.${IDEMPOTENCY}`, code: 'invalid_idempotency_key' }] } },
        });
        expect(await rows(userId)).toEqual({ n: 0 });
      }
    });
  });
});

describe('MCP on the wire: each protocol version through the one endpoint', () => {
  const MODERN = '2026-07-28';
  const envelopeMeta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
  let nextId = 1;

  /** POSTs one JSON-RPC message to the gateway's /mcp with tenant A's key. */
  const post = (message: Record<string, unknown>, headers: Record<string, string> = {}) => postJsonRpc(message, { headers });

  /** A 2026-07-28 request: the envelope in `_meta`, and the standard headers. */
  const modern = (method: string, params: Record<string, unknown> = {}, name?: string) =>
    post(
      { method, params: { ...params, _meta: { ...envelopeMeta, ...(params._meta as object) } } },
      { 'mcp-protocol-version': MODERN, 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) },
    );

  it('2026-07-28: answers server/discover without initialize, with the version, capabilities and cache hints', async () => {
    const { status, body } = await modern('server/discover');
    expect(status).toBe(200);
    expect(body.result).toMatchObject({
      supportedVersions: [MODERN],
      capabilities: { tools: {} },
      instructions: expect.stringContaining('structuredContent'),
      ttlMs: 300_000,
      cacheScope: 'public',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'edge-tools' } },
    });
  });

  it('2026-07-28: lists the tools in the same order every time, with cache hints', async () => {
    const first = await modern('tools/list');
    const second = await modern('tools/list');
    expect(first.body.result.tools.map((tool: { name: string }) => tool.name)).toEqual(tools.map((tool) => tool.id));
    expect(second.body.result.tools).toEqual(first.body.result.tools);
    expect(first.body.result).toMatchObject({ ttlMs: 300_000, cacheScope: 'public' });
  });

  it('2026-07-28: runs a call with no session and no handshake, through the pipeline', async () => {
    const input = { ...logMood.example, user_id: 'mcp-wire-modern', timestamp: uniqueTimestamp() };
    const { status, body } = await modern('tools/call', { name: 'log-mood', arguments: input }, 'log-mood');
    expect(status).toBe(200);
    expect(body.result).toMatchObject({ isError: false, structuredContent: { success: true, data: { row_count: 1 } } });
    const rows = await db.execute(
      sql`select count(*)::int as n from mood_entries where project_id = ${tenantA.projectId} and user_id = 'mcp-wire-modern' and "timestamp" = ${input.timestamp}`,
    );
    expect(rows.rows[0]).toEqual({ n: 1 });
  });

  it('2026-07-28: refuses a request whose header names another version than its _meta, and a version it does not serve', async () => {
    const mismatch = await post(
      { method: 'tools/list', params: { _meta: envelopeMeta } },
      { 'mcp-protocol-version': '2025-11-25', 'mcp-method': 'tools/list' },
    );
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toMatchObject({ code: -32020, message: expect.stringContaining('headers and body disagree') });
    const unknown = await post(
      { method: 'tools/list', params: { _meta: { ...envelopeMeta, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } },
      { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
    );
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({
      code: -32022,
      message: expect.stringContaining('2099-01-01'),
      data: { supported: [MODERN] },
    });
  });

  it.each(['2025-11-25', '2025-06-18', '2025-03-26'])(
    '%s: initializes with that version, then lists and calls statelessly, in JSON',
    async (version) => {
      const init = await post({
        method: 'initialize',
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'wire-test', version: '1' } },
      });
      expect(init.status).toBe(200);
      expect(init.headers.get('content-type')).toContain('application/json');
      expect(init.headers.get('mcp-session-id')).toBeNull();
      expect(init.body.result).toMatchObject({ protocolVersion: version, serverInfo: { name: 'edge-tools' }, capabilities: { tools: {} } });

      const headers = { 'mcp-protocol-version': version };
      const listed = await post({ method: 'tools/list' }, headers);
      expect(listed.body.result.tools.map((tool: { name: string }) => tool.name)).toEqual(tools.map((tool) => tool.id));
      // Cache hints are 2026-07-28 vocabulary: earlier versions do not get them.
      expect(listed.body.result.ttlMs).toBeUndefined();

      const called = await post(
        { method: 'tools/call', params: { name: 'log-mood', arguments: { ...logMood.example, energy_level: 15 } } },
        headers,
      );
      expect(called.body.result).toMatchObject({
        isError: true,
        structuredContent: { success: false, error: { code: 'VALIDATION_ERROR' } },
      });
    },
  );

  it('answers an initialize asking for 2026-07-28 with the newest handshake version, 2025-11-25', async () => {
    const init = await post({
      method: 'initialize',
      params: { protocolVersion: MODERN, capabilities: {}, clientInfo: { name: 'wire-test', version: '1' } },
    });
    expect(init.body.result.protocolVersion).toBe('2025-11-25');
  });

  it('checks the key before anything else, on 2026-07-28 too', async () => {
    const response = await send(
      new Request('http://edge-tools.test/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'mcp-protocol-version': MODERN, 'mcp-method': 'server/discover' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelopeMeta } }),
      }),
    );
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
  });

  it('with PUBLIC_TOOL_LIST on, lists without a key, and answers a call without one with the OAuth challenge', async () => {
    const gateway = withOAuth(createGateway(tools));
    const worker: Worker = { fetch: (request, env, ctx) => gateway.fetch(request, { ...env, PUBLIC_TOOL_LIST: 'true' }, ctx) };
    const anonymous = (message: Record<string, unknown>, method: string) =>
      send(
        // https: where OAuth is on, as deployed (it is off on plain http but for loopback).
        new Request('https://edge-tools.test/mcp', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': MODERN,
            'mcp-method': method,
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, ...message }),
        }),
        worker,
      );
    const discovered = await anonymous({ method: 'server/discover', params: { _meta: envelopeMeta } }, 'server/discover');
    expect(discovered.status).toBe(200);
    const listed = await anonymous({ method: 'tools/list', params: { _meta: envelopeMeta } }, 'tools/list');
    expect(listed.status).toBe(200);
    const body = (await listed.json()) as { result: { tools: { name: string }[]; ttlMs: number } };
    expect(body.result.tools.map((tool) => tool.name)).toEqual(tools.map((tool) => tool.id));
    expect(body.result.ttlMs).toBeLessThanOrEqual(300_000);
    const called = await anonymous(
      { method: 'tools/call', params: { name: 'list-plans', arguments: {}, _meta: envelopeMeta } },
      'tools/call',
    );
    expect(called.status).toBe(401);
    expect(called.headers.get('www-authenticate')).toMatch(
      /^Bearer realm="edge-tools", resource_metadata="https:\/\/edge-tools\.test\/\.well-known\/oauth-protected-resource\/mcp"/,
    );
    // A listing batched with a call is no listing: refused whole.
    const batch = await send(
      new Request('http://edge-tools.test/mcp', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify([
          { jsonrpc: '2.0', id: nextId++, method: 'tools/list' },
          { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'list-plans', arguments: {} } },
        ]),
      }),
      worker,
    );
    expect(batch.status).toBe(401);
  });

  it('refuses tool arguments that give a key twice, naming the key, and runs nothing', async () => {
    const timestamp = uniqueTimestamp();
    const raw = `{"jsonrpc":"2.0","id":${nextId++},"method":"tools/call","params":{"name":"log-mood","arguments":{"user_id":"mcp-duplicate","mood":"happy","mood":"sad","energy_level":5,"timestamp":"${timestamp}"}}}`;
    const response = await send(
      new Request('http://edge-tools.test/mcp', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tenantA.apiKey}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
        },
        body: raw,
      }),
    );
    const { result } = (await response.json()) as { result: { isError: boolean; structuredContent: ToolResult<unknown> } };
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      success: false,
      error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: 'mood', code: 'duplicate_key' }] } },
    });
    const rows = await db.execute(
      sql`select count(*)::int as n from mood_entries where project_id = ${tenantA.projectId} and user_id = 'mcp-duplicate'`,
    );
    expect(rows.rows[0]).toEqual({ n: 0 });
  });
});
