/**
 * Every tool as the OpenAI Agents SDK takes it from an MCP server with `convertSchemasToStrict`: the
 * SDK's own conversion (`mcpToFunctionTool`, the path `MCPServerStreamableHttp` tools take) reading
 * each tool's `inputSchema` as `tools/list` serves it. A tool the SDK cannot make strict it keeps as
 * a non-strict tool, logging why. Every tool must convert: a keyword the SDK does not take (`not`,
 * `allOf`, ...) would lose one, and so would a free-form JSON object (an object of any keys, which
 * OpenAI's strict mode refuses), which `tools/list` therefore gives as its JSON text. Nothing may
 * raise.
 */
import { mcpToFunctionTool, type MCPServer } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import { listedTools } from '../../shared/http/mcp-server.ts';

/** The server the SDK binds a tool to: the conversion reads only its name. */
const server = { name: 'edge-tools', cacheToolsList: false } as unknown as MCPServer;

describe('OpenAI Agents SDK: strict conversion of every MCP tool', () => {
  const listed = listedTools(tools);

  it.each(listed.map((tool) => [tool.name, tool] as const))('%s', (_name, tool) => {
    expect(mcpToFunctionTool(tool as never, server, true).strict).toBe(true);
  });

  it('makes every tool strict, the one with a free-form JSON field among them', () => {
    const strict = listed.filter((tool) => mcpToFunctionTool(tool as never, server, true).strict);
    expect(strict).toHaveLength(tools.length);
    const symptoms = (listed.find((tool) => tool.name === 'submit-health-form')!.inputSchema.properties as Record<string, any>).symptoms;
    expect(symptoms.anyOf).toEqual([expect.objectContaining({ type: 'string', contentMediaType: 'application/json' }), { type: 'null' }]);
  });
});
