/**
 * MCP over Streamable HTTP, driven by the official SDK client against the worker in workerd:
 * the transport's fetch calls the worker directly.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';
import { eq, sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { toolExecutions } from '../../drizzle/schema.ts';
import { tools } from '../../functions/registry.ts';
import { createGateway } from '../../shared/http/app.ts';
import type { ToolResult } from '../../shared/core/contract.ts';
import { embed } from '../../shared/http/envelope-schema.ts';
import logMood from '../../functions/table-tools/log-mood.ts';
import { db, gatedTool, send, tenantA, tenantB, uniqueTimestamp, type CallOptions } from './helpers.ts';

type Worker = NonNullable<CallOptions['worker']>;

interface ConnectOptions {
  key?: string | null;
  headers?: Record<string, string>;
  /** Default: the gateway (`exports.default`). */
  worker?: Worker;
  url?: string;
}

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** An SDK client connected (initialized) to the worker's /mcp. */
async function connect({ key = tenantA.apiKey, headers = {}, worker, url = 'http://edge-tools.test/mcp' }: ConnectOptions = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: (input, init) => send(new Request(input, init), worker),
    requestInit: { headers: { ...(key === null ? {} : { authorization: `Bearer ${key}` }), ...headers } },
  });
  // The SDK's default validator (Ajv) generates code, which workerd forbids.
  const client = new Client({ name: 'edge-tools-test', version: '1.0.0' }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  await client.connect(transport);
  clients.push(client);
  return client;
}

function envelopeOf(result: Awaited<ReturnType<Client['callTool']>>): ToolResult<Record<string, unknown>> {
  return result.structuredContent as unknown as ToolResult<Record<string, unknown>>;
}

function textOf(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result as CallToolResult).content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

/** The gateway with extra variables, as a worker. */
function gatewayWith(vars: Record<string, string>): Worker {
  const gateway = createGateway(tools);
  return { fetch: (request, env, ctx) => gateway.fetch(request, { ...env, ...vars }, ctx) };
}

describe('MCP: session', () => {
  it('initializes, statelessly, and names the server and its tools capability', async () => {
    const client = await connect();
    expect(client.getServerVersion()).toMatchObject({ name: 'edge-tools' });
    expect(client.getServerCapabilities()).toMatchObject({ tools: {} });
    expect(client.getInstructions()).toContain('structuredContent');
  });

  it('answers GET /mcp with 405: there is no server-to-client stream', async () => {
    const response = await send(new Request('http://edge-tools.test/mcp', { headers: { accept: 'text/event-stream', authorization: `Bearer ${tenantA.apiKey}` } }));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});

describe('MCP: tools/list', () => {
  it('advertises every tool with its description and the schemas the validator enforces', async () => {
    const { tools: listed } = await (await connect()).listTools();
    expect(listed.map((entry) => entry.name)).toEqual(tools.map((tool) => tool.id));
    for (const entry of listed) {
      const tool = tools.find((candidate) => candidate.id === entry.name)!;
      expect(entry.description).toBe(tool.description);
      expect(entry.inputSchema).toEqual(tool.jsonSchemas().input);
      expect(Object.keys(entry.inputSchema.properties ?? {}).sort()).toEqual(Object.keys(tool.input.shape).sort());
      // outputSchema is what structuredContent holds: the tool's success envelope, or the failure envelope.
      expect(entry.outputSchema).toMatchObject({
        type: 'object',
        oneOf: [
          { properties: { success: { const: true }, data: embed(tool.jsonSchemas().output, '#/oneOf/0/properties/data') }, required: ['success', 'message', 'data', 'meta'] },
          { properties: { success: { const: false }, error: { properties: { code: { enum: expect.arrayContaining(['VALIDATION_ERROR']) } } } } },
        ],
      });
    }
  });

  it('gives every tool a human title and truthful annotations', async () => {
    const { tools: listed } = await (await connect()).listTools();
    const byName = new Map(listed.map((entry) => [entry.name, entry]));
    for (const tool of tools) {
      const entry = byName.get(tool.id)!;
      expect(entry.title).toBe(tool.title);
      expect(entry.annotations).toEqual({ title: tool.title, ...tool.annotations });
    }
    // Spot checks of the facts themselves, not of the code that copies them.
    expect(byName.get('semantic-search')!.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    expect(byName.get('delete-document')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    expect(byName.get('add-document')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    expect(byName.get('log-mood')!.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false });
  });

  it('carries enums, bounds, required fields and descriptions', async () => {
    const { tools: listed } = await (await connect()).listTools();
    const schema = listed.find((entry) => entry.name === 'log-mood')!.inputSchema;
    expect(schema).toMatchObject({
      required: ['user_id', 'mood', 'energy_level', 'timestamp'],
      additionalProperties: false,
      properties: {
        mood: { enum: ['happy', 'sad', 'neutral', 'anxious'] },
        energy_level: { type: 'integer', minimum: 1, maximum: 10, description: expect.stringContaining('Energy') },
        user_id: { maxLength: 100 },
      },
    });
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
    const result = await (await connect()).callTool({ name: 'log-mood', arguments: { ...logMood.example, energy_level: 15, mood: 'excited' } });
    expect(result.isError).toBe(true);
    expect(envelopeOf(result)).toMatchObject({
      success: false,
      error: {
        code: 'VALIDATION_ERROR',
        retryable: false,
        details: { fields: [{ field: 'mood', code: 'invalid_value' }, { field: 'energy_level', code: 'too_big' }] },
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
    expect(envelopeOf(result)).toMatchObject({ error: { code: 'VALIDATION_ERROR', details: { fields: expect.arrayContaining([{ field: 'user_id', code: 'required', expected: 'a string', message: expect.any(String) }]) } } });
  });

  it('reads null for an optional field as absent: its default applies', async () => {
    // depth, limit, direction have defaults and are not nullable: null passes validation, and the
    // call reaches the database (which has no such task).
    const result = await (await connect()).callTool({
      name: 'query-task-graph',
      arguments: { task_id: crypto.randomUUID(), depth: null, limit: null, direction: null, relationship_type: null },
    });
    expect(envelopeOf(result)).toMatchObject({ success: false, error: { code: 'NOT_FOUND' }, meta: { attempts: 1 } });
  });

  it('refuses forbidden keys in the arguments as sent, as HTTP does', async () => {
    const result = await (await connect()).callTool({ name: 'log-mood', arguments: JSON.parse('{"__proto__": {"user_id": "x"}}') as Record<string, unknown> });
    expect(result.isError).toBe(true);
    expect(envelopeOf(result)).toMatchObject({ error: { code: 'VALIDATION_ERROR', details: { fields: [{ code: 'forbidden_key', field: '__proto__' }] } } });
  });

  it('answers an unknown tool with isError and the list of tools', async () => {
    const result = await (await connect()).callTool({ name: 'no-such-tool', arguments: {} });
    expect(result.isError).toBe(true);
    expect(envelopeOf(result)).toMatchObject({ success: false, error: { code: 'UNKNOWN_TOOL', details: { available_tools: tools.map((tool) => tool.id) } } });
    for (const tool of tools) expect(textOf(result)).toContain(tool.id);
  });
});

describe('MCP: authentication and Origin', () => {
  it.each([
    ['no API key', null],
    ['an unknown API key', 'et_unknown'],
  ])('refuses %s with 401 before reading the request', async (_case, key) => {
    await expect(connect({ key })).rejects.toMatchObject({ code: 401, message: expect.stringContaining('UNAUTHENTICATED') });
  });

  it('says how to authenticate in the 401', async () => {
    const response = await send(new Request('http://edge-tools.test/mcp', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' }));
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(await response.json()).toMatchObject({ success: false, error: { code: 'UNAUTHENTICATED', hint: expect.stringContaining('Authorization: Bearer') } });
  });

  it('refuses a browser Origin that is not allowed with 403 (DNS-rebinding protection)', async () => {
    await expect(connect({ headers: { origin: 'https://evil.example' } })).rejects.toMatchObject({ code: 403, message: expect.stringContaining('PERMISSION_DENIED') });
  });

  it('accepts origins listed in MCP_ALLOWED_ORIGINS, with CORS headers', async () => {
    const worker = gatewayWith({ MCP_ALLOWED_ORIGINS: 'https://app.example, https://other.example' });
    const client = await connect({ worker, headers: { origin: 'https://app.example' } });
    expect((await client.listTools()).tools.length).toBe(tools.length);
    const preflight = await send(
      new Request('http://edge-tools.test/mcp', { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-protocol-version' } }),
      worker,
    );
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    await expect(connect({ worker, headers: { origin: 'https://evil.example' } })).rejects.toMatchObject({ code: 403 });
  });

  it('accepts loopback origins only when the server itself is addressed on loopback (local development)', async () => {
    const headers = { origin: 'http://localhost:6274' };
    const client = await connect({ url: 'http://127.0.0.1:8787/mcp', headers });
    expect((await client.listTools()).tools.length).toBe(tools.length);
    await expect(connect({ url: 'http://edge-tools.test/mcp', headers })).rejects.toMatchObject({ code: 403 });
    // A rebinding page is addressed by its own name, even when that name resolves to loopback.
    await expect(connect({ url: 'http://rebound.example:8787/mcp', headers: { origin: 'http://rebound.example:8787' } })).rejects.toMatchObject({ code: 403 });
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
    (await db.execute(sql`select count(*)::int as n from mood_entries where project_id = ${tenantA.projectId} and user_id = ${userId}`)).rows[0];

  it('replays the first answer for the same key and arguments, marked replayed, writing nothing', async () => {
    const client = await connect();
    const userId = `mcp_idem_${crypto.randomUUID().slice(0, 8)}`;
    const key = crypto.randomUUID();
    const first = envelopeOf(await client.callTool(moodCall(userId, key)));
    const again = envelopeOf(await client.callTool(moodCall(userId, key)));
    expect(first.success).toBe(true);
    expect(again).toMatchObject({ success: true, data: first.success ? first.data : {}, meta: { replayed: true, trace_id: first.meta.trace_id } });
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
    expect(envelopeOf(concurrent)).toMatchObject({ success: false, error: { code: 'CONFLICT', retryable: true, details: { reason: 'idempotency_key_in_use' } } });
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
    const { rows: inB } = await db.execute(sql`select count(*)::int as n from mood_entries where project_id = ${tenantB.projectId} and user_id = ${userId}`);
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
