/**
 * `npm run bench -- tool-list`: what the tools cost an agent's context before it calls one. The
 * MCP `tools/list` answer (every tool, then each toolset) and the OpenAI export, in bytes of JSON
 * and in tokens of OpenAI's o200k_base encoding (js-tiktoken, which ships the ranks), per tool and
 * in total, next to the sizes before they were cut. Sizes are deterministic:
 * test/integration/tool-list-fit.test.ts holds what the worker serves to their limits.
 */
import { getEncoding } from 'js-tiktoken';
import { tools } from '../functions/registry.ts';
import { TOOLSETS } from '../shared/core/toolsets.ts';
import { listedTools } from '../shared/http/mcp-server.ts';
import { openAiCatalog } from '../shared/http/openai-export.ts';
import type { AnyTool } from '../shared/core/tool.ts';

const encoding = getEncoding('o200k_base');

/** Bytes (UTF-8) and o200k_base tokens of `value` as JSON. */
export function measure(value: unknown): { bytes: number; tokens: number } {
  const json = JSON.stringify(value);
  return { bytes: Buffer.byteLength(json), tokens: encoding.encode(json).length };
}

/** The `tools/list` result for `chosen`, as the MCP server answers it. */
export function toolsList(chosen: readonly AnyTool[]): { tools: unknown[] } {
  return { tools: listedTools(chosen) };
}

/** `data.tools` of the OpenAI export of `chosen`. */
export function openAiTools(chosen: readonly AnyTool[]): unknown[] {
  return openAiCatalog(chosen).data.tools;
}

const kb = (bytes: number) => (bytes / 1024).toFixed(1);

/** The same surfaces before the tool list was cut to fit (commit 6668c8f), for the comparison. */
const BEFORE: Record<string, { bytes: number; tokens: number }> = {
  all: { bytes: 43368, tokens: 10675 },
  documents: { bytes: 4757, tokens: 1057 },
  'task-analysis': { bytes: 11337, tokens: 2643 },
  'table-tools': { bytes: 6965, tokens: 2030 },
  study: { bytes: 20342, tokens: 4957 },
  openAi: { bytes: 33215, tokens: 7995 },
};

const before = (surface: string) => `${BEFORE[surface]!.bytes} | ${BEFORE[surface]!.tokens}`;

export async function runToolListBench(): Promise<string> {
  const rows = tools.map((tool) => {
    const [listed] = listedTools([tool]) as unknown as [{ inputSchema: unknown; outputSchema?: unknown; description?: string }];
    return {
      id: tool.id,
      toolset: tool.toolset,
      whole: measure(listed),
      input: measure(listed.inputSchema),
      output: measure(listed.outputSchema ?? null),
      description: measure(listed.description ?? ''),
      openAi: measure(openAiTools([tool])[0]),
    };
  });
  const all = measure(toolsList(tools));
  const openAi = measure(openAiTools(tools));
  const lines = [
    '## What the tool list costs an agent (MCP tools/list and the OpenAI export, bytes and o200k_base tokens)',
    '',
    'Measured with `npm run bench -- tool-list`: JSON as served, tokens counted with js-tiktoken (o200k_base).',
    '',
    'Limits (held by test/integration/tool-list-fit.test.ts on what the worker serves): all of tools/list ≤ 60 KB and 15,000 tokens, each toolset ≤ 20 KB, the OpenAI export ≤ 6,000 tokens.',
    '',
    '| surface | bytes | KB | tokens | bytes before | tokens before |',
    '|---|---:|---:|---:|---:|---:|',
    `| MCP tools/list, all ${tools.length} tools | ${all.bytes} | ${kb(all.bytes)} | ${all.tokens} | ${before('all')} |`,
    ...TOOLSETS.map((toolset) => {
      const size = measure(toolsList(tools.filter((tool) => tool.toolset === toolset)));
      return `| MCP tools/list, /mcp/${toolset} | ${size.bytes} | ${kb(size.bytes)} | ${size.tokens} | ${before(toolset)} |`;
    }),
    `| OpenAI export (GET /tools?format=openai), data.tools | ${openAi.bytes} | ${kb(openAi.bytes)} | ${openAi.tokens} | ${before('openAi')} |`,
    '',
    'Per tool (tokens; the whole entry, then its parts):',
    '',
    '| tool | toolset | bytes | tokens | description | inputSchema | outputSchema | OpenAI export |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (row) =>
        `| ${row.id} | ${row.toolset} | ${row.whole.bytes} | ${row.whole.tokens} | ${row.description.tokens} | ${row.input.tokens} | ${row.output.tokens} | ${row.openAi.tokens} |`,
    ),
  ];
  return lines.join('\n');
}
