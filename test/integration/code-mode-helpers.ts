/** Sending code to the gateway's code mode, and waiting for the trace rows written after an answer. */
import type { ToolResult } from '../../shared/core/contract.ts';
import { send, tenantA, type Answer, type CallOptions } from './helpers.ts';

export interface CodeOptions {
  key?: string;
  idempotencyKey?: string;
  /** Another gateway to send it to (e.g. one serving test tools). */
  worker?: CallOptions['worker'];
}

/** Runs `code` over HTTP (`POST /code`) or MCP (`execute` on `POST /mcp/code`, protocol 2025-06-18); answers the status and the envelope. */
export async function runCodeOver(
  transport: 'http' | 'mcp',
  code: string,
  { key = tenantA.apiKey, idempotencyKey, worker }: CodeOptions = {},
): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  if (transport === 'http') {
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    const response = await send(
      new Request('http://edge-tools.test/code', { method: 'POST', headers, body: JSON.stringify({ code }) }),
      worker,
    );
    return { status: response.status, body: (await response.json()) as ToolResult<unknown> };
  }
  const params = {
    name: 'execute',
    arguments: { code },
    ...(idempotencyKey && { _meta: { 'edge-tools/idempotency-key': idempotencyKey } }),
  };
  const response = await send(
    new Request('http://edge-tools.test/mcp/code', {
      method: 'POST',
      headers: { ...headers, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }),
    }),
    worker,
  );
  const message = (await response.json()) as { result?: { structuredContent: ToolResult<unknown> }; error?: unknown };
  if (!message.result) throw new Error(`MCP answered ${response.status}: ${JSON.stringify(message)}`);
  return { status: response.status, body: message.result.structuredContent };
}

/**
 * Polls `read` until it answers at least `n` rows: trace rows are written after the answer, and
 * this waits for that event, bounded by the test's own timeout.
 */
export async function waitForRows<T>(read: () => Promise<T[]>, n: number): Promise<T[]> {
  for (;;) {
    const rows = await read();
    if (rows.length >= n) return rows;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
