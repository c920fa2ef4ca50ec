/**
 * Mastra against the gateway: examples/mastra.ts, an `Agent` with `@mastra/mcp`'s tools, driven by
 * the mock language model of the `ai` package (which Mastra runs as any AI SDK model), scripted to
 * ask for a valid and an invalid call. The model's next request shows what it would read: with
 * `checkedByServer`, the server's answer; without, Mastra's own.
 */
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { ask, connect, type AgentModel } from '../../examples/mastra.ts';
import { catalogIds, edgeTools, expectOnlyTheValidCallSaved, expectServerAnswer, savedMessages, scenario, textsOf } from './helpers.ts';

type GenerateResult = Awaited<ReturnType<MockLanguageModelV4['doGenerate']>>;

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
/** Mastra's name for a tool of the server `edge-tools`. */
const mastraName = (tool: string) => `edge-tools_${tool}`;

/** A model that asks for `calls` (by id), then answers. */
function scriptedModel(calls: Record<string, { tool: string; input: unknown }>) {
  const steps: GenerateResult[] = [
    {
      content: Object.entries(calls).map(([id, { tool, input }]) => ({
        type: 'tool-call' as const,
        toolCallId: id,
        toolName: mastraName(tool),
        input: JSON.stringify(input),
      })),
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage,
      warnings: [],
    },
    { content: [{ type: 'text', text: 'Saved.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
  ];
  return new MockLanguageModelV4({ doGenerate: steps });
}

/** What the model's second request carries as the result of call `id`. */
function resultRead(model: MockLanguageModelV4, id: string): string {
  const results = model.doGenerateCalls[1]!.prompt.flatMap((message) => (message.role === 'tool' ? message.content : []));
  const result = results.find((part) => part.type === 'tool-result' && part.toolCallId === id);
  return textsOf(result && 'output' in result ? result.output : undefined);
}

describe('Mastra (@mastra/mcp)', () => {
  it("lists the toolset's tools", async () => {
    const client = connect(edgeTools());
    try {
      const tools = await client.listTools();
      expect(Object.keys(tools).sort()).toEqual((await catalogIds()).map(mastraName).sort());
    } finally {
      await client.disconnect();
    }
  });

  it('runs a valid and an invalid call as the model asks, and with checkedByServer hands the model the server’s answers', async () => {
    const calls = scenario('mastra');
    const model = scriptedModel({ valid: { tool: calls.tool, input: calls.valid }, invalid: { tool: calls.tool, input: calls.invalid } });

    const result = await ask('Remember that I study in the morning.', edgeTools(), model as AgentModel);

    expect(result.text).toBe('Saved.');
    // The model is still shown the tool's schema, the allowed roles included.
    const offered = model.doGenerateCalls[0]!.tools?.find((tool) => tool.name === mastraName(calls.tool));
    expect(offered && 'inputSchema' in offered ? offered.inputSchema : undefined).toMatchObject({
      properties: { role: { enum: ['user', 'assistant', 'system', 'tool'] } },
    });
    expect(resultRead(model, 'valid')).toContain(`in session "${calls.valid.session_id}"`);
    await expectServerAnswer(resultRead(model, 'invalid'), calls);
    await expectOnlyTheValidCallSaved(calls);
  });

  it('without checkedByServer, Mastra refuses the invalid call itself, in its own words', async () => {
    const calls = scenario('mastra-own-check');
    const model = scriptedModel({ invalid: { tool: calls.tool, input: calls.invalid } });

    await ask('Remember that I study in the morning.', edgeTools(), model as AgentModel, { serverChecks: false });

    expect(resultRead(model, 'invalid')).toContain('Tool input validation failed');
    expect(resultRead(model, 'invalid')).not.toContain('Hint:');
    expect(await savedMessages(calls.valid.session_id)).toEqual([]);
  });
});
