/**
 * What an agent is shown, as the running gateway serves it, fits every model vendor and its context:
 *
 * - every advertised input schema (MCP `tools/list` on each protocol version and toolset, `GET /tools`,
 *   the OpenAI export, the OpenAPI document's request bodies) passes the judges written from
 *   Anthropic's, OpenAI's and Gemini's documentation (test/support/vendor-rules/);
 * - the MCP Inspector's `--strict` portability check (test/support/vendor-rules/inspector.ts) finds
 *   no error and at most {@link INSPECTOR_WARNINGS} warnings in `tools/list`;
 * - the sizes, in bytes of JSON and in tokens of OpenAI's o200k_base encoding (js-tiktoken, counted in
 *   Node: test/setup/token-counter.ts), within the budgets below, which leave room for more tools
 *   of today's average size (`npm run bench -- tool-list` says how many).
 *
 * `npm run bench -- tool-list` prints the same sizes per tool.
 */
import { describe, expect, it } from 'vitest';
import { TOOLSETS } from '../../shared/core/toolsets.ts';
import { anthropicTool } from '../support/vendor-rules/anthropic.ts';
import { inspectorFindings } from '../support/vendor-rules/inspector.ts';
import { geminiDeclaration, geminiSchemaSubset } from '../support/vendor-rules/gemini.ts';
import { portable } from '../support/vendor-rules/walk.ts';
import { openAiFunction, type OpenAiFunction } from '../support/vendor-rules/openai.ts';
import type { Schema } from '../support/vendor-rules/walk.ts';
import { countTokens, postJsonRpc, send } from './helpers.ts';
import { TOOL_LIST_BUDGETS } from '../support/tool-list-budgets.ts';

/**
 * What an agent may be given to read: every tool's `tools/list` (about 6,000 tokens for 29 tools),
 * `/mcp/study`'s (about 3,300 for 17), any toolset's in bytes, the OpenAI export (about 4,350), code
 * mode's list (about 420).
 */
const BUDGETS = TOOL_LIST_BUDGETS;
/** The Inspector's `--strict` warnings allowed in `tools/list` (it finds none today). */
const INSPECTOR_WARNINGS = 30;
const LEGACY_VERSIONS = ['2025-03-26', '2025-06-18', '2025-11-25'];
const MODERN = '2026-07-28';
const KB = 1024;

interface ListedTool {
  name: string;
  inputSchema: Schema;
}

/** The `tools/list` result of `path` (`/mcp`, `/mcp/study`, `/mcp/code`) on protocol `version`, as served. */
async function toolsList(path: string, version: string): Promise<{ json: string; tools: ListedTool[] }> {
  const post = async (message: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const answer = await postJsonRpc(message, { path, headers });
    expect(answer.status).toBe(200);
    return answer.body as { result: { tools: ListedTool[] } };
  };
  let body;
  if (version === MODERN) {
    const _meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
    body = await post({ method: 'tools/list', params: { _meta } }, { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' });
  } else {
    await post({
      method: 'initialize',
      params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'fit-test', version: '1' } },
    });
    body = await post({ method: 'tools/list' }, { 'mcp-protocol-version': version });
  }
  // What a client puts in the model's context: the tools as listed (cache hints and the like left out).
  const tools = body.result.tools;
  expect(tools.length).toBeGreaterThan(0);
  return { json: JSON.stringify({ tools }), tools };
}

/** The JSON body of `GET path`, which must answer 200. */
async function served<T>(path: string): Promise<T> {
  const response = await send(new Request(`http://edge-tools.test${path}`));
  expect(response.status, path).toBe(200);
  return (await response.json()) as T;
}

interface OpenAiExport {
  data: { tools: { type: string; function: OpenAiFunction }[] };
}

const sizeOf = async (json: string) => ({ bytes: new TextEncoder().encode(json).length, tokens: await countTokens(json) });

/** Every vendor's verdict on one tool's input schema, named by surface and tool. */
function verdicts(surface: string, name: string, schema: Schema): string[] {
  return [
    ...anthropicTool(name, schema).map((rule) => `Anthropic: ${rule}`),
    ...geminiDeclaration(name, schema).map((rule) => `Gemini: ${rule}`),
    ...portable(schema).map((rule) => `every host: ${rule}`),
  ].map((rule) => `${surface} ${name}: ${rule}`);
}

describe('every advertised input schema passes Anthropic, OpenAI and Gemini rules', { timeout: 120_000 }, () => {
  it.each([...LEGACY_VERSIONS, MODERN])('MCP tools/list on %s, all tools, each toolset and code mode', async (version) => {
    for (const path of ['/mcp', ...TOOLSETS.map((toolset) => `/mcp/${toolset}`), '/mcp/code']) {
      const { tools } = await toolsList(path, version);
      const broken = tools.flatMap((tool) => [
        ...verdicts(`${path} ${version}`, tool.name, tool.inputSchema),
        // A client that passes MCP tools to OpenAI sends them as non-strict functions.
        ...openAiFunction({ name: tool.name, parameters: tool.inputSchema, strict: false }).map(
          (rule) => `${path} ${tool.name}: OpenAI: ${rule}`,
        ),
      ]);
      expect(broken).toEqual([]);
    }
  });

  it('GET /tools and the OpenAPI request bodies', async () => {
    const catalog = await served<{ data: { tools: { id: string; input_schema: Schema }[] } }>('/tools');
    expect(catalog.data.tools.length).toBeGreaterThan(0);
    const openapi = await served<{
      paths: Record<string, { post?: { requestBody: { content: { 'application/json': { schema: Schema } } } } }>;
    }>('/openapi.json');
    const bodies = Object.entries(openapi.paths).flatMap(([path, item]) => {
      const schema = item.post?.requestBody.content['application/json'].schema;
      return schema ? [{ name: path.replace(/^\/(tools\/)?/, ''), schema }] : [];
    });
    // Every tool's body, and code mode's (POST /code, named 'code' here), which must fit the same rules.
    expect(bodies.map((body) => body.name).sort()).toEqual([...catalog.data.tools.map((tool) => tool.id), 'code'].sort());
    expect([
      ...catalog.data.tools.flatMap((tool) => verdicts('GET /tools', tool.id, tool.input_schema)),
      ...bodies.flatMap(({ name, schema }) => verdicts('OpenAPI', name, schema)),
    ]).toEqual([]);
  });

  it('the OpenAI export, strict where it says strict, for all tools, ?toolset= and ?tool=', async () => {
    for (const query of ['', '&toolset=study', '&toolset=documents,task-analysis', '&tool=log-mood,write-plan']) {
      const body = await served<OpenAiExport>(`/tools?format=openai${query}`);
      const functions = body.data.tools.map((tool) => tool.function);
      expect(functions.length).toBeGreaterThan(0);
      // Most tools are strict; the few that are not say why in the catalog's message.
      expect(functions.filter((definition) => definition.strict).length).toBeGreaterThan(functions.length / 2);
      expect(
        functions.flatMap((definition) => [
          ...openAiFunction(definition),
          ...verdicts('OpenAI export', definition.name, definition.parameters),
        ]),
      ).toEqual([]);
    }
  });
});

describe('the Gemini export', { timeout: 120_000 }, () => {
  it("passes Gemini's rules for a function declaration's parameters, for all tools, ?toolset= and ?tool=", async () => {
    for (const query of ['', '&toolset=study', '&tool=submit-health-form,update-item-status']) {
      const body = await served<{
        data: { tools: { functionDeclarations: { name: string; description: string; parameters: Schema }[] }[] };
      }>(`/tools?format=gemini${query}`);
      expect(body.data.tools).toHaveLength(1);
      const declarations = body.data.tools[0]!.functionDeclarations;
      expect(declarations.length).toBeGreaterThan(0);
      expect(
        declarations.flatMap(({ name, description, parameters }) => [
          ...(description ? [] : [`${name}: no description`]),
          ...geminiDeclaration(name, parameters),
          ...geminiSchemaSubset(parameters),
          ...portable(parameters),
        ]),
      ).toEqual([]);
    }
  });
});

describe("the MCP Inspector's --strict check", { timeout: 120_000 }, () => {
  it.each(['/mcp', '/mcp/code'])(`%s: no error, at most ${INSPECTOR_WARNINGS} warnings`, async (path) => {
    const { tools } = await toolsList(path, MODERN);
    const findings = inspectorFindings(tools);
    expect(findings.filter((finding) => finding.severity === 'error')).toEqual([]);
    expect(findings.length, JSON.stringify(findings)).toBeLessThanOrEqual(INSPECTOR_WARNINGS);
  });
});

describe('the tool list fits in an agent context (bytes of JSON, o200k_base tokens)', { timeout: 120_000 }, () => {
  it(`all of tools/list: at most ${BUDGETS.allTokens} tokens, on every protocol version`, async () => {
    for (const version of [...LEGACY_VERSIONS, MODERN]) {
      const size = await sizeOf((await toolsList('/mcp', version)).json);
      expect(size.tokens, version).toBeLessThanOrEqual(BUDGETS.allTokens);
    }
  });

  it(`tools/list of /mcp/study: at most ${BUDGETS.studyTokens} tokens`, async () => {
    const size = await sizeOf((await toolsList('/mcp/study', MODERN)).json);
    expect(size.tokens).toBeLessThanOrEqual(BUDGETS.studyTokens);
  });

  it.each(TOOLSETS)(`tools/list of /mcp/%s: at most ${BUDGETS.toolsetBytes / KB} KB`, async (toolset) => {
    const { json } = await toolsList(`/mcp/${toolset}`, MODERN);
    expect(new TextEncoder().encode(json).length).toBeLessThanOrEqual(BUDGETS.toolsetBytes);
  });

  it(`tools/list of /mcp/code: at most ${BUDGETS.codeTokens} tokens, every tool named in execute's description`, async () => {
    const { json, tools } = await toolsList('/mcp/code', MODERN);
    expect((await sizeOf(json)).tokens).toBeLessThanOrEqual(BUDGETS.codeTokens);
    const catalog = await served<{ data: { tools: { id: string }[] } }>('/tools');
    const execute = (tools as unknown as { name: string; description: string }[]).find((tool) => tool.name === 'execute')!;
    // The index: a line per toolset, `<toolset>: <id>, <id>*, ...`.
    const named = execute.description
      .split('\n')
      .slice(1)
      .flatMap((line) => line.slice(line.indexOf(': ') + 2).split(', '))
      .map((id) => id.replace(/\*$/, ''));
    expect(named.sort()).toEqual(catalog.data.tools.map(({ id }) => id).sort());
  });

  it(`the OpenAI export of all tools: at most ${BUDGETS.openAiTokens} tokens, and a subset is smaller`, async () => {
    const exported = async (query: string) => {
      const body = await served<OpenAiExport>(`/tools?format=openai${query}`);
      return { count: body.data.tools.length, size: await sizeOf(JSON.stringify(body.data.tools)) };
    };
    const all = await exported('');
    expect(all.size.tokens).toBeLessThanOrEqual(BUDGETS.openAiTokens);
    const study = await exported('&toolset=study');
    const one = await exported('&tool=log-mood');
    expect(one.count).toBe(1);
    expect(study.count).toBeLessThan(all.count);
    expect(one.size.tokens).toBeLessThan(study.size.tokens);
    expect(study.size.tokens).toBeLessThan(all.size.tokens);
  });
});
