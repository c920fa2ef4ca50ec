/**
 * What the tools cost an agent's context, held to its limits: MCP `tools/list` for every tool
 * (60 KB, 15,000 tokens) and for each toolset (20 KB), and the OpenAI export. Tokens are counted
 * with a real tokenizer (js-tiktoken, o200k_base); sizes are deterministic. The figures per tool:
 * `npm run bench -- tool-list`.
 */
import { getEncoding } from 'js-tiktoken';
import { describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import { TOOLSETS } from '../../shared/core/toolsets.ts';
import { listedTools } from '../../shared/http/mcp.ts';
import { openAiCatalog } from '../../shared/http/openai-export.ts';

const encoding = getEncoding('o200k_base');
const bytesOf = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;
const tokensOf = (value: unknown) => encoding.encode(JSON.stringify(value)).length;

describe('the tool list fits an agent context', () => {
  it('MCP tools/list for every tool: at most 60 KB and 15,000 tokens', () => {
    const list = { tools: listedTools(tools) };
    expect(list.tools).toHaveLength(tools.length);
    expect(bytesOf(list)).toBeLessThanOrEqual(60 * 1024);
    expect(tokensOf(list)).toBeLessThanOrEqual(15_000);
  });

  it.each(TOOLSETS)('MCP tools/list of /mcp/%s: at most 20 KB', (toolset) => {
    const chosen = tools.filter((tool) => tool.toolset === toolset);
    expect(chosen.length).toBeGreaterThan(0);
    expect(bytesOf({ tools: listedTools(chosen) })).toBeLessThanOrEqual(20 * 1024);
  });

  it('OpenAI export of every tool: measured (the target is 6,000 tokens)', () => {
    const exported = openAiCatalog(tools).data.tools;
    expect(exported).toHaveLength(tools.length);
    // Today's ceiling, so that it only shrinks: see the tool-list bench section.
    expect(tokensOf(exported)).toBeLessThanOrEqual(8_000);
  });
});
