/**
 * Mastra with edge-tools: `@mastra/mcp`'s `MCPClient` gives a toolset's tools to an `Agent`.
 *
 *   EDGE_TOOLS_URL=http://127.0.0.1:8787/mcp/study EDGE_TOOLS_KEY=et_… OPENAI_API_KEY=… \
 *     node examples/mastra.ts "Remember that I prefer morning quizzes."
 *
 * Mastra checks a call's arguments against the tool's input schema before sending it, and on a
 * mismatch hands the model its own generic text ("Tool input validation failed … must be equal to
 * one of the allowed values") instead of the server's answer, which names the field, what it
 * expects and what it received, and shows a valid call. {@link checkedByServer} leaves the check to
 * the server: the model is still shown each tool's schema.
 */
import { Agent } from '@mastra/core/agent';
import type { ToolsInput } from '@mastra/core/agent';
import { MCPClient } from '@mastra/mcp';
import { authorization, edgeToolsFromEnv, type EdgeTools } from './edge-tools.ts';

/** A model as `Agent` takes it: a `provider/model` id, or a model object. */
export type AgentModel = ConstructorParameters<typeof Agent>[0]['model'];

/** A client of the gateway: `listTools()` gives its tools, named `edge-tools_<tool id>`. Disconnect it when done. */
export function connect(edgeTools: EdgeTools): MCPClient {
  return new MCPClient({ servers: { 'edge-tools': { url: new URL(edgeTools.url), requestInit: { headers: authorization(edgeTools) } } } });
}

/**
 * The tools with their input schemas kept for the model but accepting every value (a Standard
 * JSON Schema, as Mastra takes for any tool), so that the server checks the arguments and the
 * model reads its answer. It is how @mastra/mcp itself treats output schemas.
 */
export function checkedByServer<Tools extends ToolsInput>(tools: Tools): Tools {
  for (const tool of Object.values(tools)) {
    if (!('inputSchema' in tool) || !tool.inputSchema || !('~standard' in tool.inputSchema)) continue;
    tool.inputSchema = {
      '~standard': { ...tool.inputSchema['~standard'], validate: (value: unknown) => ({ value }) },
    } as typeof tool.inputSchema;
  }
  return tools;
}

/** Lets an agent with the toolset's tools answer `prompt`, in up to 5 steps (`serverChecks: false` keeps Mastra's own check). */
export async function ask(prompt: string, edgeTools: EdgeTools, model: AgentModel = 'openai/gpt-5-mini', { serverChecks = true } = {}) {
  const client = connect(edgeTools);
  try {
    const listed = await client.listTools();
    const tools = serverChecks ? checkedByServer(listed) : listed;
    const agent = new Agent({
      id: 'study-helper',
      name: 'Study helper',
      instructions: 'Use the tools to keep and recall what the user studies.',
      model,
      tools,
    });
    return await agent.generate(prompt, { maxSteps: 5 });
  } finally {
    await client.disconnect();
  }
}

if (import.meta.main) {
  const result = await ask(process.argv[2] ?? 'What did we say in session demo-session?', edgeToolsFromEnv());
  console.log(result.text);
}
