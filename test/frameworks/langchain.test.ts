/**
 * LangChain against the gateway: examples/langchain.ts, whose tools come from
 * `@langchain/mcp-adapters` and run in LangGraph's `ToolNode` as an agent runs them, given the
 * valid and the invalid call a model would make. The `ToolMessage`s are what the model reads.
 */
import { describe, expect, it } from 'vitest';
import { toJsonSchema } from '@langchain/core/utils/json_schema';
import { checkedByServer, connect, runToolCalls } from '../../examples/langchain.ts';
import { catalogIds, edgeTools, expectOnlyTheValidCallSaved, expectServerAnswer, savedMessages, scenario, textsOf } from './helpers.ts';

describe('LangChain (@langchain/mcp-adapters)', () => {
  it("lists the toolset's tools", async () => {
    const client = connect(edgeTools());
    try {
      const tools = await client.getTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual((await catalogIds()).sort());
      // checkedByServer leaves the schemas the model is shown as they were.
      const shown = tools.map((tool) => toJsonSchema(tool.schema));
      expect(checkedByServer(tools).map((tool) => toJsonSchema(tool.schema))).toEqual(shown);
    } finally {
      await client.close();
    }
  });

  it('runs a valid and an invalid call as the agent does, and hands the model the server’s answers', async () => {
    const calls = scenario('langchain');
    const messages = await runToolCalls(
      [
        { type: 'tool_call', id: 'valid', name: calls.tool, args: calls.valid },
        { type: 'tool_call', id: 'invalid', name: calls.tool, args: calls.invalid },
      ],
      edgeTools(),
    );

    const read = (id: string) => messages.find((message) => message.tool_call_id === id)!;
    expect(read('valid').status).toBe('success');
    // The adapter hands the text block (and the envelope beside it) as JSON.
    expect(textsOf(read('valid').content)).toMatch(new RegExp(`Saved user message \\d+ in session \\\\"${calls.valid.session_id}\\\\"`));
    expect(read('invalid').status).toBe('error');
    await expectServerAnswer(textsOf(read('invalid').content), calls);
    await expectOnlyTheValidCallSaved(calls);
  });

  it('without checkedByServer, LangChain refuses the invalid call itself, in its own words', async () => {
    const calls = scenario('langchain-own-check');
    const [answer] = await runToolCalls([{ type: 'tool_call', id: 'invalid', name: calls.tool, args: calls.invalid }], edgeTools(), {
      serverChecks: false,
    });
    expect(answer!.status).toBe('error');
    expect(textsOf(answer!.content)).toContain('did not match expected schema');
    expect(textsOf(answer!.content)).not.toContain('Hint:');
    expect(await savedMessages(calls.valid.session_id)).toEqual([]);
  });
});
