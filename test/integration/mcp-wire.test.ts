/**
 * /mcp on the wire, by hand rather than through an SDK: each protocol version through the one
 * endpoint (2026-07-28's server/discover and `_meta` envelope without a handshake; 2025-11-25,
 * 2025-06-18 and 2025-03-26 through `initialize`), headers that disagree with the body, the key
 * checked first, the public listing's OAuth challenge, and duplicate keys in tool arguments.
 */
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import logMood from '../../functions/table-tools/log-mood.ts';
import type { ToolResult } from '../../shared/core/contract.ts';
import { createGateway } from '../../shared/http/app.ts';
import { withOAuth } from '../../shared/http/oauth.ts';
import { db, postJsonRpc, send, tenantA, uniqueTimestamp } from './helpers.ts';
import type { Worker } from './mcp-fixture.ts';

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
