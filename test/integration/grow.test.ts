/**
 * Adding a tool, as docs/add-a-tool.md says: a gateway over the registry and the page's example tool
 * (test/support/example-tool.ts, which is the page's code to the byte) is what adding the file and its
 * line in functions/registry.ts makes. The new tool is listed on every surface, in its toolset and no
 * other; the ids the listing tests derive from a registry (toolset-ids.ts) follow it; and its example
 * call runs, answering what the database holds.
 */
import { and, count, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { chatMessages } from '../../drizzle/schema.ts';
import { tools } from '../../functions/registry.ts';
import type { AnyTool } from '../../shared/core/tool.ts';
import { TOOLSETS } from '../../shared/core/toolsets.ts';
import { createGateway } from '../../shared/http/app.ts';
import exampleTool from '../support/example-tool.ts';
import { callTool, db, send, tenantA } from './helpers.ts';
import { idsOf } from './toolset-ids.ts';

/** The registry without the example (which a checkout following the page may hold already), then with it. */
const before: readonly AnyTool[] = tools.filter((tool) => tool.id !== exampleTool.id);
const grown: readonly AnyTool[] = [...before, exampleTool as AnyTool];
const gateway = createGateway(grown);
const NEW_ID = exampleTool.id;

/** `GET path` on the grown gateway, with tenant A's key: its JSON body. */
async function get<T>(path: string): Promise<T> {
  const response = await send(
    new Request(`http://edge-tools.test${path}`, { headers: { authorization: `Bearer ${tenantA.apiKey}` } }),
    gateway,
  );
  expect(response.status, path).toBe(200);
  return (await response.json()) as T;
}

/** The names MCP `tools/list` gives on `path` of the grown gateway (protocol 2025-06-18, after `initialize`). */
async function mcpListed(path: string): Promise<string[]> {
  const post = async (id: number, method: string, params: Record<string, unknown>) => {
    const response = await send(
      new Request(`http://edge-tools.test${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tenantA.apiKey}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      }),
      gateway,
    );
    expect(response.status, `${path} ${method}`).toBe(200);
    return (await response.json()) as { result: { tools: { name: string }[] } };
  };
  await post(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'grow-test', version: '1' } });
  return (await post(2, 'tools/list', {})).result.tools.map((tool) => tool.name);
}

describe('a registry with one more tool', () => {
  it('derives one more id, in the toolset of the new tool only', () => {
    expect(idsOf(TOOLSETS, grown)).toEqual([...idsOf(TOOLSETS, before), NEW_ID]);
    expect(idsOf([exampleTool.toolset], grown)).toEqual([...idsOf([exampleTool.toolset], before), NEW_ID]);
    for (const toolset of TOOLSETS.filter((name) => name !== exampleTool.toolset)) {
      expect(idsOf([toolset], grown), toolset).toEqual(idsOf([toolset], before));
    }
  });

  it('lists it in the catalog, the OpenAI export and the OpenAPI document, within its toolset', async () => {
    const catalog = await get<{ data: { tools: { id: string; toolset: string }[] } }>('/tools');
    expect(catalog.data.tools.map((tool) => tool.id)).toEqual(idsOf(TOOLSETS, grown));
    const ownToolset = await get<{ data: { tools: { id: string }[] } }>(`/tools?toolset=${exampleTool.toolset}`);
    expect(ownToolset.data.tools.map((tool) => tool.id)).toEqual(idsOf([exampleTool.toolset], grown));
    const openai = await get<{ data: { tools: { function: { name: string; strict: boolean } }[] } }>(
      `/tools?format=openai&toolset=${exampleTool.toolset}`,
    );
    expect(openai.data.tools.map((tool) => tool.function.name)).toEqual(idsOf([exampleTool.toolset], grown));
    expect(openai.data.tools.at(-1)!.function.strict).toBe(true);
    const openapi = await get<{ paths: Record<string, unknown> }>('/openapi.json');
    expect(Object.keys(openapi.paths)).toContain(`/tools/${NEW_ID}`);
  });

  it('lists it over MCP on /mcp and on its toolset, and not on another toolset', async () => {
    expect(await mcpListed('/mcp')).toEqual(idsOf(TOOLSETS, grown));
    expect(await mcpListed(`/mcp/${exampleTool.toolset}`)).toEqual(idsOf([exampleTool.toolset], grown));
    const other = TOOLSETS.find((name) => name !== exampleTool.toolset)!;
    expect(await mcpListed(`/mcp/${other}`)).toEqual(idsOf([other], grown));
  });

  it('runs its example call, which answers what the database holds', async () => {
    const { session_id } = exampleTool.example;
    const [row] = await db
      .select({ n: count() })
      .from(chatMessages)
      .where(and(eq(chatMessages.projectId, tenantA.projectId), eq(chatMessages.sessionId, session_id)));
    const { status, body } = await callTool<{ session_id: string; count: number }>(NEW_ID, exampleTool.example, { worker: gateway });
    expect(body, body.message).toMatchObject({ success: true, data: { session_id, count: row!.n }, meta: { tool: NEW_ID, attempts: 1 } });
    expect(status).toBe(200);
  });
});
