/**
 * The OpenAI Agents SDK for JavaScript with edge-tools: the gateway as an `MCPServerStreamableHttp`
 * in the agent's `mcpServers`; `run()` calls the tools the model asks for and hands it the results.
 *
 *   EDGE_TOOLS_URL=http://127.0.0.1:8787/mcp/study EDGE_TOOLS_KEY=et_… OPENAI_API_KEY=… \
 *     node examples/openai-agents.ts "Remember that I prefer morning quizzes."
 *
 * The SDK offers the tools to the model under names with `_` for `-` (`save_message`) and maps them back.
 */
import { Agent, MCPServerStreamableHttp, run, type Model } from '@openai/agents';
import { authorization, edgeToolsFromEnv, type EdgeTools } from './edge-tools.ts';

/** The gateway as an MCP server of the SDK (call `connect()` before use, `close()` after). */
export function connect(edgeTools: EdgeTools): MCPServerStreamableHttp {
  return new MCPServerStreamableHttp({ name: 'edge-tools', url: edgeTools.url, requestInit: { headers: authorization(edgeTools) } });
}

/** Runs an agent with the toolset's tools on `prompt`, in up to 5 turns; `model` is a name or a `Model`. */
export async function ask(prompt: string, edgeTools: EdgeTools, model: string | Model = 'gpt-5-mini') {
  const server = connect(edgeTools);
  await server.connect();
  try {
    const agent = new Agent({
      name: 'Study helper',
      instructions: 'Use the tools to keep and recall what the user studies.',
      model,
      mcpServers: [server],
    });
    return await run(agent, prompt, { maxTurns: 5 });
  } finally {
    await server.close();
  }
}

if (import.meta.main) {
  const result = await ask(process.argv[2] ?? 'What did we say in session demo-session?', edgeToolsFromEnv());
  console.log(result.finalOutput);
}
