/**
 * Toolsets on every surface: `POST /mcp/<toolsets>` (through the official SDK client), the catalog,
 * the OpenAI export and the OpenAPI document with `?toolset=`, and the errors for a toolset that
 * does not exist. The expected ids come from the registry, grouped by toolset (toolset-ids.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolResult } from '../../shared/core/contract.ts';
import { closeMcpClients, connectMcp, getJson, send, tenantA } from './helpers.ts';
import { ALL_TOOLS, DOCUMENTS, STUDY, TABLE_TOOLS, TASK_ANALYSIS } from './toolset-ids.ts';

afterEach(closeMcpClients);

describe('POST /mcp/<toolsets>', () => {
  it('serves only the tools of one toolset', async () => {
    const client = await connectMcp('/mcp/study');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...STUDY].sort());
  });

  it('serves a comma-separated list, in any case and with snake_case names', async () => {
    const client = await connectMcp('/mcp/Table_Tools,documents');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...DOCUMENTS, ...TABLE_TOOLS].sort());
  });

  it('runs a tool of the toolset and refuses one outside it as unknown', async () => {
    const client = await connectMcp('/mcp/study');
    const listed = await client.callTool({ name: 'list-plans', arguments: {} });
    expect(listed.isError).toBeFalsy();
    const outside = await client.callTool({ name: 'log-mood', arguments: { energy_level: 5 } });
    expect(outside.isError).toBe(true);
    const envelope = outside.structuredContent as unknown as ToolResult<unknown>;
    expect(envelope.success).toBe(false);
    if (!envelope.success) expect(envelope.error.code).toBe('UNKNOWN_TOOL');
  });

  it('serves every tool on /mcp', async () => {
    const client = await connectMcp('/mcp');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...ALL_TOOLS].sort());
  });

  it('answers an unknown toolset with 404 listing the toolsets', async () => {
    const response = await send(
      new Request('http://edge-tools.test/mcp/studies,documents', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tenantA.apiKey}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      }),
    );
    expect(response.status).toBe(404);
    const body = (await response.json()) as ToolResult<unknown>;
    expect(body.success).toBe(false);
    if (body.success) return;
    expect(body.error.code).toBe('NOT_FOUND');
    expect(body.error.message).toContain("'studies'");
    for (const toolset of ['documents', 'task-analysis', 'table-tools', 'study']) expect(body.error.message).toContain(toolset);
  });
});

describe('?toolset= on the catalog, the OpenAI export and the OpenAPI document', () => {
  it('lists the tools of the toolsets asked for, each naming its toolset', async () => {
    const { status, body } = await getJson<{ tools: { id: string; toolset: string }[] }>('/tools?toolset=task-analysis');
    expect(status).toBe(200);
    if (!body.success) throw new Error(body.message);
    expect(body.data.tools.map((tool) => tool.id)).toEqual(TASK_ANALYSIS);
    expect(new Set(body.data.tools.map((tool) => tool.toolset))).toEqual(new Set(['task-analysis']));
  });

  it('exports the tools asked for by ?tool= and ?toolset= in the OpenAI format', async () => {
    const byTool = await getJson<{ tools: { function: { name: string } }[] }>('/tools?format=openai&tool=list-plans,log-mood');
    if (!byTool.body.success) throw new Error(byTool.body.message);
    expect(byTool.body.data.tools.map((tool) => tool.function.name)).toEqual(['log-mood', 'list-plans']);
    const byToolset = await getJson<{ tools: { function: { name: string } }[] }>('/tools?format=openai&toolset=documents');
    if (!byToolset.body.success) throw new Error(byToolset.body.message);
    expect(byToolset.body.data.tools.map((tool) => tool.function.name)).toEqual(DOCUMENTS);
  });

  it('refuses a tool outside the toolsets asked for, and an unknown toolset', async () => {
    const outside = await getJson('/tools?toolset=study&tool=log-mood');
    expect(outside.status).toBe(404);
    if (!outside.body.success) expect(outside.body.error.code).toBe('UNKNOWN_TOOL');
    const unknown = await getJson('/tools?toolset=nope');
    expect(unknown.status).toBe(400);
    if (!unknown.body.success) expect(unknown.body.error.message).toContain('table-tools');
  });

  it('documents only the routes of the toolsets asked for', async () => {
    const response = await send(new Request('http://edge-tools.test/openapi.json?toolset=table-tools'));
    const document = (await response.json()) as { paths: Record<string, unknown> };
    const toolPaths = Object.keys(document.paths).filter((path) => path.startsWith('/tools/'));
    expect(toolPaths.sort()).toEqual(TABLE_TOOLS.map((id) => `/tools/${id}`).sort());
  });
});
