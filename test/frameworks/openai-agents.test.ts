/**
 * The OpenAI Agents SDK for JavaScript against the gateway: examples/openai-agents.ts with a
 * scripted model (the SDK's `Model` interface) that asks for a valid and an invalid call; `run()`
 * calls them through the SDK's `MCPServerStreamableHttp`, and the model's next request shows what
 * it would read.
 */
import { Usage, type Model, type ModelRequest, type ModelResponse } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { ask, connect } from '../../examples/openai-agents.ts';
import { catalogIds, edgeTools, expectOnlyTheValidCallSaved, expectServerAnswer, scenario, textsOf } from './helpers.ts';

// No traces are exported to OpenAI from the tests.
process.env.OPENAI_AGENTS_DISABLE_TRACING = '1';

/** A model that answers each request with the next of `turns`, given the tools it was offered; it keeps the requests. */
function scriptedModel(turns: ((request: ModelRequest) => ModelResponse['output'])[]): Model & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    requests,
    async getResponse(request) {
      requests.push(request);
      const turn = turns[requests.length - 1];
      if (!turn) throw new Error(`The script has ${turns.length} turns; the run asked for another.`);
      return { usage: new Usage(), output: turn(request) };
    },
    getStreamedResponse() {
      throw new Error('The tests run without streaming.');
    },
  };
}

describe('OpenAI Agents SDK (MCPServerStreamableHttp)', () => {
  it("lists the toolset's tools", async () => {
    const server = connect(edgeTools());
    await server.connect();
    try {
      const tools = await server.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual((await catalogIds()).sort());
    } finally {
      await server.close();
    }
  });

  it('runs a valid and an invalid call as the model asks, and hands the model the server’s answers', async () => {
    const calls = scenario('openai-agents');
    const model = scriptedModel([
      (request) => {
        // The model calls the tool by the name the SDK offered it.
        const offered = request.tools.find((tool) => tool.name.replaceAll('_', '-') === calls.tool);
        expect(offered, `offered: ${request.tools.map((tool) => tool.name).join(', ')}`).toBeDefined();
        return [
          { type: 'function_call', callId: 'valid', name: offered!.name, arguments: JSON.stringify(calls.valid), status: 'completed' },
          { type: 'function_call', callId: 'invalid', name: offered!.name, arguments: JSON.stringify(calls.invalid), status: 'completed' },
        ];
      },
      () => [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Saved.' }] }],
    ]);

    const result = await ask('Remember that I study in the morning.', edgeTools(), model);

    expect(result.finalOutput).toBe('Saved.');
    const input = model.requests[1]!.input;
    expect(Array.isArray(input)).toBe(true);
    const output = (id: string) =>
      textsOf((input as any[]).find((item) => item.type === 'function_call_result' && item.callId === id)?.output);
    expect(output('valid')).toContain(`in session "${calls.valid.session_id}"`);
    await expectServerAnswer(output('invalid'), calls);
    await expectOnlyTheValidCallSaved(calls);
  });
});
