/**
 * Names an agent written to other conventions sends (snake_case, camelCase, a letter off): the
 * UNKNOWN_TOOL of the HTTP tool route, of MCP tools/call and of the catalog's ?tool=, and the 404 of
 * a route that does not exist, each suggest the nearest name, and nothing is run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolResult } from '../../shared/core/contract.ts';
import { callTool, closeMcpClients, connectMcp, getJson, tenantA } from './helpers.ts';

afterEach(closeMcpClients);

async function mcpCall(path: string, name: string): Promise<ToolResult<unknown>> {
  const client = await connectMcp(path);
  const result = await client.callTool({ name, arguments: {} });
  expect(result.isError).toBe(true);
  return result.structuredContent as unknown as ToolResult<unknown>;
}

function expectSuggested(body: ToolResult<unknown>, code: string, suggestion: string): void {
  if (body.success) throw new Error(`expected ${code}`);
  expect(body.error.code).toBe(code);
  expect(body.error.message).toContain(`Did you mean ${suggestion}?`);
  expect(body.error.details?.suggestions).toEqual([suggestion]);
}

describe('an unknown tool name suggests the nearest tool', () => {
  it('on the HTTP tool route', async () => {
    for (const [sent, meant] of [
      ['list_plans', 'list-plans'],
      ['getDueFlashcards', 'get-due-flashcards'],
      ['list-plan', 'list-plans'],
    ] as const) {
      const { status, body } = await callTool(sent, {});
      expect(status).toBe(404);
      expectSuggested(body, 'UNKNOWN_TOOL', meant);
      if (!body.success) expect(body.error.hint).toContain(`POST /tools/${meant}`);
    }
  });

  it('on MCP tools/call, among the tools of the URL', async () => {
    expectSuggested(await mcpCall('/mcp', 'add_document'), 'UNKNOWN_TOOL', 'add-document');
    expectSuggested(await mcpCall('/mcp/study', 'getWeakTopics'), 'UNKNOWN_TOOL', 'get-weak-topics');
    // /mcp/study does not serve documents tools: nothing to suggest.
    const outside = await mcpCall('/mcp/study', 'add_document');
    expect(outside.success === false && outside.error.details?.suggestions).toBeUndefined();
  });

  it("on the catalog's ?tool=", async () => {
    expectSuggested((await getJson('/tools?tool=Log_Mood')).body, 'UNKNOWN_TOOL', 'log-mood');
  });

  it('and says nothing of a name nothing resembles', async () => {
    const { body } = await callTool('send-email', {});
    if (body.success) throw new Error('expected UNKNOWN_TOOL');
    expect(body.error.message).not.toContain('Did you mean');
    expect(body.error.details?.suggestions).toBeUndefined();
  });
});

describe('a route that does not exist suggests the nearest route', () => {
  it('with its method, parameters filled from the path', async () => {
    const executions = await getJson('/execution', tenantA.apiKey);
    expect(executions.status).toBe(404);
    expectSuggested(executions.body, 'NOT_FOUND', 'GET /executions');
    const tool = await callTool('', {}, { path: '/tool/list-plans' });
    expect(tool.status).toBe(404);
    expectSuggested(tool.body, 'NOT_FOUND', 'POST /tools/list-plans');
  });
});
