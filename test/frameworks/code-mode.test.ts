/**
 * Code mode as users connect to it: the official MCP SDK clients (v2 on 2026-07-28, and v1) and the
 * Vercel AI SDK's MCP client call `execute` on the gateway's `/mcp/code` (examples/code-mode.ts
 * writes the code), plain HTTP calls `POST /code`, all against the bundle wrangler builds (which
 * loads code mode on first use), and the gateway's HTTP API judges what was written: the message is saved once,
 * also when the same keyed code is sent again.
 */
import { createMCPClient } from '@ai-sdk/mcp';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, inject, it } from 'vitest';
import { connect, execute, saveAndRead } from '../../examples/code-mode.ts';
import { savedMessages } from './helpers.ts';

const url = () => `${inject('gatewayUrl')}/mcp/code`;
const headers = () => ({ Authorization: `Bearer ${inject('gatewayKey')}` });

describe('code mode through real clients', () => {
  it('the MCP SDK v2 client lists execute and describe, and a keyed execute sent twice saves once', async () => {
    const client = await connect({ url: url(), key: inject('gatewayKey') });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['execute', 'describe']);
      const session = `code-mode-v2-${crypto.randomUUID()}`;
      const code = saveAndRead(session, 'Saved from code, through the v2 client.');
      const key = crypto.randomUUID();
      const first = await execute(client, code, key);
      const second = await execute(client, code, key);
      expect(first.data?.result).toEqual(['user: Saved from code, through the v2 client.']);
      expect(second.data?.calls.map((call) => call.success)).toEqual([true, true]);
      expect(await savedMessages(session)).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it('the MCP SDK v1 client runs execute', async () => {
    const client = new ClientV1({ name: 'code-mode-v1', version: '1.0.0' });
    await client.connect(new TransportV1(new URL(url()), { requestInit: { headers: headers() } }));
    try {
      const session = `code-mode-v1-${crypto.randomUUID()}`;
      const envelope = await execute(client as never, saveAndRead(session, 'Saved through the v1 client.'));
      expect(envelope.success, envelope.message).toBe(true);
      expect(await savedMessages(session)).toEqual([expect.objectContaining({ role: 'user', content: 'Saved through the v1 client.' })]);
    } finally {
      await client.close();
    }
  });

  it('plain HTTP: POST /code answers the same envelope, and GET /code/types declares the tools', async () => {
    const session = `code-mode-http-${crypto.randomUUID()}`;
    const response = await fetch(`${inject('gatewayUrl')}/code`, {
      method: 'POST',
      headers: { ...headers(), 'content-type': 'application/json' },
      body: JSON.stringify({ code: saveAndRead(session, 'Saved over plain HTTP.') }),
    });
    const envelope = (await response.json()) as { success: boolean; message: string; data: { result: unknown } };
    expect(envelope.success, envelope.message).toBe(true);
    expect(envelope.data.result).toEqual(['user: Saved over plain HTTP.']);
    const types = (await (await fetch(`${inject('gatewayUrl')}/code/types`, { headers: headers() })).json()) as {
      data: { declarations: string };
    };
    expect(types.data.declarations).toContain('"save-message"(input: SaveMessageInput): Promise<Envelope<SaveMessageOutput>>;');
  });

  it("the AI SDK's MCP client offers execute as a tool and runs it", async () => {
    const client = await createMCPClient({ transport: { type: 'http', url: url(), headers: headers() } });
    try {
      const tools = await client.tools();
      expect(Object.keys(tools).sort()).toEqual(['describe', 'execute']);
      const session = `code-mode-ai-sdk-${crypto.randomUUID()}`;
      const result = (await tools.execute!.execute!(
        { code: saveAndRead(session, 'Saved through the AI SDK.') },
        { toolCallId: 'code', messages: [], context: {} },
      )) as { structuredContent?: { success: boolean } };
      expect(result.structuredContent?.success).toBe(true);
      expect(await savedMessages(session)).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});
