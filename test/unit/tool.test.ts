import { afterEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { ok } from '../../shared/core/contract.ts';
import { text } from '../../shared/core/fields.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { tableTool } from '../../functions/table-tools/lib/table-tool.ts';

describe('defineTool', () => {
  it('builds the schemas on first use, once, and not when the tool is defined', () => {
    const built = { input: 0, output: 0 };
    const tool = defineTool({
      id: 'echo',
      toolset: 'documents',
      title: 'Echo',
      annotations: READ_ONLY,
      description: 'Repeats a text back.',
      get input() {
        built.input++;
        return z.strictObject({ text: text({ max: 100 }) });
      },
      get output() {
        built.output++;
        return z.object({ text: z.string() });
      },
      example: { text: 'hello' },
      async execute(input) {
        return ok({ text: input.text }, 'Echoed.');
      },
    });
    // What routes and lists a tool is there at once; no schema is built yet.
    expect([tool.id, tool.toolset, tool.title, tool.hint]).toEqual([
      'echo',
      'documents',
      'Echo',
      'Example of a valid call: {"text":"hello"}',
    ]);
    expect(built).toEqual({ input: 0, output: 0 });

    expect(tool.input.safeParse({ text: 'hi' }).success).toBe(true);
    expect(tool.input.safeParse({ text: 'x'.repeat(101) }).success).toBe(false);
    expect(tool.input).toBe(tool.input);
    expect(built).toEqual({ input: 1, output: 0 });

    const schemas = tool.jsonSchemas();
    expect(schemas.input).toMatchObject({ type: 'object', properties: { text: { type: 'string', maxLength: 100 } }, required: ['text'] });
    expect(schemas.output).toMatchObject({ type: 'object', properties: { text: { type: 'string' } } });
    expect(tool.jsonSchemas()).toBe(schemas);
    expect(built).toEqual({ input: 1, output: 1 });
  });
});

describe('tableTool', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('checks its configuration when the tool is first needed, not when it is defined', () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const tool = tableTool({
      toolId: 'log-thing',
      displayName: 'Log thing',
      recordName: 'thing',
      description: 'Logs a thing.',
      tableName: 'things',
      fields: [{ name: 'n', label: 'N', dataType: 'integer', min: 5, max: 1 }],
    });
    expect([tool.id, tool.toolset]).toEqual(['log-thing', 'table-tools']);
    expect(errors).not.toHaveBeenCalled();

    expect(tool.unavailable?.error).toMatchObject({ code: 'CONFIG_ERROR', details: { reason: 'invalid_table_config' } });
    expect(tool.title).toBe('Unavailable: Log thing');
    expect(errors).toHaveBeenCalledTimes(1);
    expect(String(errors.mock.calls[0]![0])).toContain('invalid_table_config');
    expect(tool.description).toContain("'min' (5) is greater than 'max' (1)");
    expect(errors).toHaveBeenCalledTimes(1);
  });
});
