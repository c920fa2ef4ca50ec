/**
 * The Gemini export (GET /tools?format=gemini) against Gemini's documented rules for a function
 * declaration's `parameters` (test/support/vendor-rules/gemini.ts), for every tool and for a table
 * tool using every rule a table configuration offers; what it cannot carry is said in words.
 */
import { describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import { validateInput } from '../../shared/core/validation.ts';
import { geminiCatalog, geminiDeclaration as exported } from '../../shared/http/gemini-export.ts';
import { everyRule } from '../support/every-rule-tool.ts';
import { geminiDeclaration, geminiSchemaSubset } from '../support/vendor-rules/gemini.ts';
import { portable } from '../support/vendor-rules/walk.ts';

describe.each([...tools, everyRule].map((tool) => [tool.id, tool] as const))('%s as a Gemini function declaration', (id, tool) => {
  const declaration = exported(tool);

  it("passes Gemini's rules: name, parameter names, the Schema subset, no references", () => {
    expect(declaration.name).toBe(id);
    expect(declaration.description).toBe(tool.purpose);
    expect([
      ...geminiDeclaration(declaration.name, declaration.parameters),
      ...geminiSchemaSubset(declaration.parameters),
      ...portable(declaration.parameters),
    ]).toEqual([]);
  });

  it('keeps the fields and which are required, and its example is accepted by the tool', () => {
    const input = tool.jsonSchemas().input as { properties: Record<string, unknown>; required?: string[] };
    expect(Object.keys(declaration.parameters.properties as object)).toEqual(Object.keys(input.properties));
    expect(declaration.parameters.required ?? []).toEqual(input.required ?? []);
    expect(validateInput(tool.input, tool.example, tool.hint).ok).toBe(true);
  });
});

describe('what Gemini cannot carry', () => {
  it('is said in the description: ids are UUIDs, lists have no repeats, bounds that exclude, JSON depth', () => {
    const clustering = exported(tools.find((tool) => tool.id === 'cluster-by-similarity')!).parameters as {
      properties: Record<string, { description?: string; items?: { description?: string } }>;
    };
    expect(clustering.properties.task_ids!.description).toContain('No repeats.');
    expect(clustering.properties.task_ids!.items!.description).toContain('A UUID');
    const row = exported(everyRule).parameters as { properties: Record<string, { description?: string; nullable?: boolean }> };
    expect(row.properties.price!.description).toMatch(/Greater than -99\.995\b/);
    expect(row.properties.payload!.description).toContain('nested at most 8 levels');
    expect(row.properties.payload!.nullable).toBe(true);
  });

  it('lists every tool under one Gemini tool, ready to pass as `tools`', () => {
    const { data } = geminiCatalog(tools);
    expect(data.tools).toHaveLength(1);
    expect(data.tools[0]!.functionDeclarations.map((declaration) => declaration.name)).toEqual(tools.map((tool) => tool.id));
  });
});
