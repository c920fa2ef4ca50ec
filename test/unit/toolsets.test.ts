import { existsSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import { parseToolsets, TOOLSETS } from '../../shared/core/toolsets.ts';

describe('toolsets', () => {
  it('each tool names the folder its file is in (table tools: their configurations)', () => {
    for (const tool of tools) {
      const file = tool.toolset === 'table-tools' ? `functions/table-tools/${tool.id}.ts` : `functions/${tool.toolset}/${tool.id}.ts`;
      expect(existsSync(file), `${tool.id} in ${tool.toolset}`).toBe(true);
    }
    expect(new Set(tools.map((tool) => tool.toolset))).toEqual(new Set(TOOLSETS));
  });

  it('every tool file of functions/<toolset>/ is in the registry, once', () => {
    const files = TOOLSETS.flatMap((toolset) =>
      readdirSync(`functions/${toolset}`)
        .filter((file) => file.endsWith('.ts'))
        .map((file) => file.slice(0, -3)),
    );
    const registered = tools.map((tool) => tool.id);
    expect(new Set(registered).size, 'an id listed twice in functions/registry.ts').toBe(registered.length);
    expect(
      files.filter((id) => !registered.includes(id)),
      'tool files missing from functions/registry.ts: import each and add it to `tools`',
    ).toEqual([]);
  });

  it('reads comma-separated lists in catalog order, without repeats, ignoring case and _ for -', () => {
    expect(parseToolsets('study, Documents,study')).toEqual({ ok: true, toolsets: ['documents', 'study'] });
    expect(parseToolsets('TASK_ANALYSIS')).toEqual({ ok: true, toolsets: ['task-analysis'] });
  });

  it('names each unknown toolset and lists the toolsets', () => {
    const parsed = parseToolsets('studies,documents,tables', { source: "Query parameter 'toolset'" });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error.code).toBe('VALIDATION_ERROR');
    expect(parsed.error.message).toMatch(
      /^Query parameter 'toolset' names toolsets that do not exist: 'studies', 'tables'\. Toolsets: documents \(/,
    );
    expect(parsed.error.details?.unknown_toolsets).toEqual(['studies', 'tables']);
    const empty = parseToolsets(' , ', { code: 'NOT_FOUND' });
    expect(!empty.ok && empty.error.code).toBe('NOT_FOUND');
  });
});
