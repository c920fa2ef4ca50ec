/**
 * `npm run bench -- tool-list`: what the tools cost an agent's context before it calls one. The
 * MCP `tools/list` answer (every tool, then each toolset) and the OpenAI export, in bytes of JSON
 * and in tokens of OpenAI's o200k_base encoding (js-tiktoken, which ships the ranks), per tool and
 * in total, next to the sizes before they were cut, with how many more tools of today's average size
 * each budget leaves room for, and what the MCP Inspector's `--strict` check finds. Sizes are
 * deterministic: test/integration/tool-list-fit.test.ts holds what the worker serves to the same budgets.
 */
import { getEncoding } from 'js-tiktoken';
import { tools } from '../functions/registry.ts';
import { TOOLSETS } from '../shared/core/toolsets.ts';
import { listedTools } from '../shared/http/mcp-server.ts';
import { openAiCatalog } from '../shared/http/openai-export.ts';
import type { AnyTool } from '../shared/core/tool.ts';
import { inspectorFindings } from '../test/support/vendor-rules/inspector.ts';
import { TOOL_LIST_BUDGETS } from '../test/support/tool-list-budgets.ts';

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

/**
 * The same surfaces before descriptions lost the words that repeat their schema and a free-form
 * JSON field became strict as its JSON text, for the comparison.
 */
const BEFORE: Record<string, { bytes: number; tokens: number }> = {
  all: { bytes: 27939, tokens: 7062 },
  documents: { bytes: 2743, tokens: 631 },
  'task-analysis': { bytes: 6331, tokens: 1528 },
  'table-tools': { bytes: 3402, tokens: 957 },
  study: { bytes: 15496, tokens: 3958 },
  openAi: { bytes: 22730, tokens: 5263 },
};

/** How many more tools of `average` tokens fit between `used` and `budget`. */
const room = (budget: number, used: number, average: number) => Math.max(0, Math.floor((budget - used) / average));

const before = (surface: string) => `${BEFORE[surface]!.bytes} | ${BEFORE[surface]!.tokens}`;

export async function runToolListBench(): Promise<string> {
  const rows = tools.map((tool) => {
    const [listed] = listedTools([tool]) as unknown as [{ inputSchema: unknown; description?: string }];
    return {
      id: tool.id,
      toolset: tool.toolset,
      whole: measure(listed),
      input: measure(listed.inputSchema),
      description: measure(listed.description ?? ''),
      openAi: measure(openAiTools([tool])[0]),
    };
  });
  const all = measure(toolsList(tools));
  const openAi = measure(openAiTools(tools));
  const studyTools = tools.filter((tool) => tool.toolset === 'study');
  const study = measure(toolsList(studyTools));
  const average = (size: number, count: number) => size / count;
  const findings = inspectorFindings(listedTools(tools));
  const lines = [
    '## What the tool list costs an agent (MCP tools/list and the OpenAI export, bytes and o200k_base tokens)',
    '',
    'Measured with `npm run bench -- tool-list`: JSON as served, tokens counted with js-tiktoken (o200k_base).',
    '',
    `Budgets (held by test/integration/tool-list-fit.test.ts on what the worker serves): all of tools/list ≤ ${TOOL_LIST_BUDGETS.allTokens.toLocaleString('en')} tokens, /mcp/study ≤ ${TOOL_LIST_BUDGETS.studyTokens.toLocaleString('en')}, each toolset ≤ ${TOOL_LIST_BUDGETS.toolsetBytes / 1024} KB, the OpenAI export ≤ ${TOOL_LIST_BUDGETS.openAiTokens.toLocaleString('en')}; /mcp/code ≤ ${TOOL_LIST_BUDGETS.codeTokens.toLocaleString('en')} (its figure is in the code-mode section).`,
    '',
    `Room left, in tools of today's average size: ${room(TOOL_LIST_BUDGETS.allTokens, all.tokens, average(all.tokens, tools.length))} more in all of tools/list (${Math.round(average(all.tokens, tools.length))} tokens a tool), ${room(TOOL_LIST_BUDGETS.studyTokens, study.tokens, average(study.tokens, studyTools.length))} more in /mcp/study (${Math.round(average(study.tokens, studyTools.length))} a tool), ${room(TOOL_LIST_BUDGETS.openAiTokens, openAi.tokens, average(openAi.tokens, tools.length))} more in the OpenAI export (${Math.round(average(openAi.tokens, tools.length))} a tool).`,
    '',
    `The MCP Inspector's \`--strict\` check (its portability rules, test/support/vendor-rules/inspector.ts) on all of tools/list: ${findings.filter((finding) => finding.severity === 'error').length} errors, ${findings.filter((finding) => finding.severity === 'warning').length} warnings${findings.length ? ` (${[...new Set(findings.map((finding) => `${finding.tool} ${finding.path}: ${finding.rule}`))].join('; ')})` : ''}.`,
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
    '| tool | toolset | bytes | tokens | description | inputSchema | OpenAI export |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (row) =>
        `| ${row.id} | ${row.toolset} | ${row.whole.bytes} | ${row.whole.tokens} | ${row.description.tokens} | ${row.input.tokens} | ${row.openAi.tokens} |`,
    ),
  ];
  return lines.join('\n');
}
