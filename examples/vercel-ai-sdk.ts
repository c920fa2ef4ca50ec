/**
 * The Vercel AI SDK with edge-tools: `@ai-sdk/mcp`'s client over Streamable HTTP gives a toolset's
 * tools to `generateText`, which runs the model's tool calls itself and hands it the results.
 *
 *   EDGE_TOOLS_URL=http://127.0.0.1:8787/mcp/study EDGE_TOOLS_KEY=et_… AI_GATEWAY_API_KEY=… \
 *     node examples/vercel-ai-sdk.ts "Remember that I prefer morning quizzes."
 *
 * `model` is any the SDK takes: a gateway id such as `openai/gpt-5-mini`, or a provider package's.
 */
import { createMCPClient } from '@ai-sdk/mcp';
import { generateText, stepCountIs, type LanguageModel } from 'ai';
import { authorization, edgeToolsFromEnv, type EdgeTools } from './edge-tools.ts';

/** An MCP client of the gateway: `tools()` are ready for `generateText`. Close it when done. */
export function connect(edgeTools: EdgeTools) {
  return createMCPClient({ transport: { type: 'http', url: edgeTools.url, headers: authorization(edgeTools) } });
}

/** Lets `model` answer `prompt` with the toolset's tools, in up to 5 steps (tool calls, then an answer). */
export async function ask(prompt: string, edgeTools: EdgeTools, model: LanguageModel = 'openai/gpt-5-mini') {
  const client = await connect(edgeTools);
  try {
    return await generateText({ model, tools: await client.tools(), stopWhen: stepCountIs(5), prompt });
  } finally {
    await client.close();
  }
}

if (import.meta.main) {
  const result = await ask(process.argv[2] ?? 'What did we say in session demo-session?', edgeToolsFromEnv());
  console.log(result.text);
}
