/**
 * Sending code to the gateway's code mode, judging how it ended, waiting for the trace rows written
 * after an answer, and keeping another tenant's requests going while an attack runs.
 */
import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { toolExecutions } from '../../drizzle/schema.ts';
import type { StoppingLimit } from '../../shared/codemode/limits.ts';
import type { ToolResult } from '../../shared/core/contract.ts';
import { callTool, db, getJson, send, tenantA, type Answer, type CallOptions } from './helpers.ts';

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

/** The failure an execution answered, or a thrown error when it succeeded. */
export function failureOf(body: Answer['body']) {
  if (body.success) throw new Error(`expected a failure, got ${JSON.stringify(body).slice(0, 300)}`);
  return body.error;
}

/** The data an execution answered, or a thrown error when it failed. */
export function resultOf(body: Answer['body']) {
  if (!body.success) throw new Error(body.message);
  return body.data as {
    result: unknown;
    calls: { tool: string; trace_id: string; success: boolean; error_code?: string }[];
    calls_refused?: number;
    logs: string[];
    logs_dropped?: number;
  };
}

/**
 * Asserts that an execution was stopped at one of `limits`: which of several bounds fires first
 * depends on the machine's speed, so a test names every bound that may legitimately stop its code.
 */
export function expectStopped(body: Answer['body'], limits: readonly StoppingLimit[]): void {
  const error = failureOf(body);
  expect(error.details, error.message).toMatchObject({ reason: 'code_limit' });
  expect(limits, error.message).toContain((error.details as { limit: StoppingLimit }).limit);
}

/** Waits for the execution's own trace row (written after its answer): every execution has one, however it ended. */
export async function executionRow(traceId: string) {
  const [row] = await waitForRows(() => db.select().from(toolExecutions).where(eq(toolExecutions.id, traceId)), 1);
  return row!;
}

/** What another tenant saw while an attack ran: every answer's status and success, per kind of request. */
export interface VictimLog {
  health: { status: number }[];
  calls: { status: number; success: boolean }[];
}

/**
 * Runs `attack` while another tenant (`victimKey`) keeps calling a tool directly and asking
 * `/health`, one request of each kind at a time, until the attack has answered; answers both.
 * A request that throws is a lost request: it fails the test.
 */
export async function underAttack<T>(attack: () => Promise<T>, victimKey: string): Promise<{ attack: T; victim: VictimLog }> {
  const victim: VictimLog = { health: [], calls: [] };
  let attacking = true;
  const pace = () => new Promise((resolve) => setTimeout(resolve, 50));
  const pollHealth = async () => {
    while (attacking) {
      victim.health.push({ status: (await getJson('/health')).status });
      await pace();
    }
  };
  const pollCalls = async () => {
    while (attacking) {
      const { status, body } = await callTool('list-plans', { limit: 1 }, { key: victimKey });
      victim.calls.push({ status, success: body.success });
      await pace();
    }
  };
  const polling = Promise.all([pollHealth(), pollCalls()]);
  try {
    return { attack: await attack(), victim };
  } finally {
    attacking = false;
    await polling;
  }
}

/** Asserts that the victim of {@link underAttack} was answered every time, and answered at least once. */
export function expectUnharmed(victim: VictimLog): void {
  expect(victim.health.length).toBeGreaterThan(0);
  expect(victim.calls.length).toBeGreaterThan(0);
  expect(victim.health.filter((answer) => answer.status !== 200)).toEqual([]);
  expect(victim.calls.filter((answer) => answer.status !== 200 || !answer.success)).toEqual([]);
}
