/**
 * Code mode: an agent that sends one function instead of one tool call per step. It connects to
 * the gateway's `/mcp/code` with the official MCP SDK client (v2, protocol 2026-07-28), reads what
 * the tools it will use take and answer (`describe`), and runs the whole workflow in one
 * `execute`: every call inside is still validated, rate limited, capped, idempotent and traced
 * (docs/code-mode.md).
 *
 *   EDGE_TOOLS_URL=http://127.0.0.1:8787/mcp/code EDGE_TOOLS_KEY=et_... node examples/code-mode.ts
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { authorization, edgeToolsFromEnv, type EdgeTools } from './edge-tools.ts';

/** A client connected to the code-mode endpoint (`…/mcp/code`). */
export async function connect(edgeTools: EdgeTools): Promise<Client> {
  const client = new Client(
    { name: 'edge-tools-code-mode-example', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(edgeTools.url), { requestInit: { headers: authorization(edgeTools) } }));
  return client;
}

/** What a model would write to save a message and read the conversation back, in one round trip. */
export function saveAndRead(sessionId: string, content: string): string {
  return `async () => {
    const saved = await tools.saveMessage({ session_id: ${JSON.stringify(sessionId)}, role: "user", content: ${JSON.stringify(content)} });
    if (!saved.success) return { failed: saved.error.code, why: saved.error.message };
    const read = await tools["get-messages"]({ session_id: ${JSON.stringify(sessionId)} });
    return read.success ? read.data.messages.map((m) => m.role + ": " + m.content) : read.error.code;
  }`;
}

/** Runs `code` through `execute`, with an idempotency key when given; answers the envelope. */
export async function execute(client: Pick<Client, 'callTool'>, code: string, idempotencyKey?: string) {
  const result = await client.callTool({
    name: 'execute',
    arguments: { code },
    ...(idempotencyKey && { _meta: { 'edge-tools/idempotency-key': idempotencyKey } }),
  });
  return result.structuredContent as {
    success: boolean;
    message: string;
    data?: { result: unknown; calls: { tool: string; success: boolean }[] };
  };
}

if (import.meta.main) {
  const edgeTools = edgeToolsFromEnv({ EDGE_TOOLS_URL: 'http://127.0.0.1:8787/mcp/code', ...process.env });
  const client = await connect(edgeTools);
  try {
    const described = await client.callTool({ name: 'describe', arguments: { tools: ['save-message', 'get-messages'] } });
    console.log((described.content as { text: string }[])[0]!.text);
    console.log(JSON.stringify(await execute(client, saveAndRead('code-mode-example', 'I study best in the morning.')), null, 2));
  } finally {
    await client.close();
  }
}
