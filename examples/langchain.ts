/**
 * LangChain with edge-tools: `@langchain/mcp-adapters`' `MultiServerMCPClient` turns a toolset into
 * LangChain tools; LangGraph's `ToolNode`, the node an agent runs its tools with, carries out the
 * model's tool calls and answers the `ToolMessage`s the model reads next.
 *
 *   EDGE_TOOLS_URL=http://127.0.0.1:8787/mcp/study EDGE_TOOLS_KEY=et_… node examples/langchain.ts
 *
 * With a chat model: `createAgent({ model, tools })` (package `langchain`), or
 * `model.bindTools(tools)` and `new ToolNode(tools)` in a graph of your own.
 *
 * LangChain checks a call's arguments against the tool's input schema before sending it, and on a
 * mismatch hands the model "Received tool input did not match expected schema" instead of the
 * server's answer, which names the field, what it expects and what it received, and shows a valid
 * call. {@link checkedByServer} leaves the check to the server: the model is still shown each
 * tool's schema.
 */
import { AIMessage, type ToolMessage } from '@langchain/core/messages';
import type { ToolCall } from '@langchain/core/messages/tool';
import type { DynamicStructuredTool } from '@langchain/core/tools';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { authorization, edgeToolsFromEnv, type EdgeTools } from './edge-tools.ts';

/** A client of the gateway: `getTools()` gives its tools as LangChain tools. Close it when done. */
export function connect(edgeTools: EdgeTools): MultiServerMCPClient {
  return new MultiServerMCPClient({
    mcpServers: { 'edge-tools': { transport: 'http', url: edgeTools.url, headers: authorization(edgeTools) } },
  });
}

/**
 * The tools with their JSON Schemas given as Standard JSON Schemas (which LangChain shows the
 * model as it shows any) that accept every value, so that the server checks the arguments and the
 * model reads its answer.
 */
export function checkedByServer<Tool extends DynamicStructuredTool>(tools: Tool[]): Tool[] {
  for (const tool of tools) {
    const schema = tool.schema as Record<string, unknown>;
    if ('~standard' in schema) continue;
    tool.schema = {
      '~standard': {
        version: 1,
        vendor: 'edge-tools',
        validate: (value: unknown) => ({ value }),
        jsonSchema: { input: () => schema, output: () => schema },
      },
    } as unknown as Tool['schema'];
  }
  return tools;
}

/** Runs a model's tool calls as an agent does (a `ToolNode`), and answers the messages the model reads next. */
export async function runToolCalls(toolCalls: ToolCall[], edgeTools: EdgeTools, { serverChecks = true } = {}): Promise<ToolMessage[]> {
  const client = connect(edgeTools);
  try {
    const tools = await client.getTools();
    const node = new ToolNode(serverChecks ? checkedByServer(tools) : tools);
    const { messages } = await node.invoke({ messages: [new AIMessage({ content: '', tool_calls: toolCalls })] });
    return messages;
  } finally {
    await client.close();
  }
}

if (import.meta.main) {
  const [answer] = await runToolCalls(
    [{ type: 'tool_call', id: 'call-1', name: 'get-messages', args: { session_id: 'demo-session', limit: 5 } }],
    edgeToolsFromEnv(),
  );
  console.log(answer?.content);
}
