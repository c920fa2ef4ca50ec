/**
 * Every tool as the OpenAI Agents SDK takes it from an MCP server with `convertSchemasToStrict`: the
 * SDK's own conversion (`mcpToFunctionTool`, the path `MCPServerStreamableHttp` tools take) reading
 * each tool's `inputSchema` as `tools/list` serves it. A tool the SDK cannot make strict it keeps as
 * a non-strict tool, logging why; that must happen only where strict mode cannot say the input at all
 * (a free-form JSON object, which OpenAI's strict mode refuses, as the OpenAI export says), never
 * because of a keyword the SDK does not take (`not`, `allOf`, ...). Nothing may raise.
 */
import { mcpToFunctionTool, type MCPServer } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import { listedTools } from '../../shared/http/mcp-server.ts';

/** The server the SDK binds a tool to: the conversion reads only its name. */
const server = { name: 'edge-tools', cacheToolsList: false } as unknown as MCPServer;

/** Whether a tool's input has a free-form JSON object (any keys), written out from the catalog's schema. */
function hasFreeFormObject(schema: Record<string, any>): boolean {
  return Object.values<Record<string, any>>(schema.properties ?? {}).some((field) =>
    [field, ...(field.anyOf ?? [])].some((option) => option.additionalProperties !== undefined && option.additionalProperties !== false),
  );
}

describe('OpenAI Agents SDK: strict conversion of every MCP tool', () => {
  const listed = listedTools(tools);

  it.each(listed.map((tool) => [tool.name, tool] as const))('%s', (_name, tool) => {
    const converted = mcpToFunctionTool(tool as never, server, true);
    const freeForm = hasFreeFormObject(tools.find((candidate) => candidate.id === tool.name)!.jsonSchemas().input);
    expect(converted.strict, freeForm ? 'a free-form JSON object is never strict' : 'strict').toBe(!freeForm);
  });

  it('makes all but the tools with a free-form JSON object strict', () => {
    const strict = listed.filter((tool) => mcpToFunctionTool(tool as never, server, true).strict).length;
    const freeForm = tools.filter((tool) => hasFreeFormObject(tool.jsonSchemas().input)).length;
    expect(freeForm).toBeLessThanOrEqual(1);
    expect(strict).toBe(listed.length - freeForm);
  });
});
