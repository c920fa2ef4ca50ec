/**
 * The Vercel AI SDK against the gateway: examples/vercel-ai-sdk.ts with the mock language model
 * the `ai` package ships for tests, scripted to ask for a valid and an invalid call; the SDK runs
 * them itself (`generateText` with the MCP client's tools), and the model's next request shows
 * what it would read.
 */
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { ask, connect } from '../../examples/vercel-ai-sdk.ts';
import { catalogIds, edgeTools, expectOnlyTheValidCallSaved, expectServerAnswer, scenario, textsOf } from './helpers.ts';

/** One answer of the model, as the SDK's language model interface (v4) has it. */
type GenerateResult = Awaited<ReturnType<MockLanguageModelV4['doGenerate']>>;

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

describe('Vercel AI SDK (@ai-sdk/mcp)', () => {
  it("lists the toolset's tools", async () => {
    const client = await connect(edgeTools());
    try {
      const tools = await client.tools();
      expect(Object.keys(tools).sort()).toEqual((await catalogIds()).sort());
    } finally {
      await client.close();
    }
  });

  it('runs a valid and an invalid call as the model asks, and hands the model the server’s answers', async () => {
    const calls = scenario('vercel-ai-sdk');
    const steps: GenerateResult[] = [
      {
        content: [
          { type: 'tool-call', toolCallId: 'valid', toolName: calls.tool, input: JSON.stringify(calls.valid) },
          { type: 'tool-call', toolCallId: 'invalid', toolName: calls.tool, input: JSON.stringify(calls.invalid) },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      },
      { content: [{ type: 'text', text: 'Saved.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
    ];
    const model = new MockLanguageModelV4({ doGenerate: steps });

    const result = await ask('Remember that I study in the morning.', edgeTools(), model);

    expect(result.text).toBe('Saved.');
    // The model was offered the tool with its schema, and its second request carries both results.
    expect(model.doGenerateCalls[0]!.tools?.map((tool) => tool.name)).toContain(calls.tool);
    const results = model.doGenerateCalls[1]!.prompt.flatMap((message) => (message.role === 'tool' ? message.content : []));
    const output = (id: string) => textsOf(results.find((part) => part.type === 'tool-result' && part.toolCallId === id));
    expect(output('valid')).toContain(`in session "${calls.valid.session_id}"`);
    await expectServerAnswer(output('invalid'), calls);
    await expectOnlyTheValidCallSaved(calls);
  });
});
