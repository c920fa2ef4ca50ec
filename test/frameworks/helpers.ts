/**
 * What the framework tests share: the gateway started by gateway.ts, its HTTP API as the judge of
 * what a call wrote and what the server answers, and the scenario every framework plays: list a
 * toolset, save a message (a valid call) and save one with an unknown role (an invalid call), as
 * a model would ask.
 */
import { expect, inject } from 'vitest';
import type { EdgeTools } from '../../examples/edge-tools.ts';

/** The toolset the frameworks connect to. */
export const TOOLSET = 'study';

/** The gateway's MCP endpoint for {@link TOOLSET} and the project's key, as the examples take them. */
export function edgeTools(): EdgeTools {
  return { url: `${inject('gatewayUrl')}/mcp/${TOOLSET}`, key: inject('gatewayKey') };
}

/** An envelope as the HTTP API answers it. */
export interface Envelope {
  success: boolean;
  message: string;
  data?: any;
  error?: { code: string; message: string; hint?: string; details?: { fields?: { field: string; message: string }[] } };
}

/** Calls a tool over HTTP, with the same key. */
export async function callOverHttp(tool: string, input: unknown): Promise<Envelope> {
  const response = await fetch(`${inject('gatewayUrl')}/tools/${tool}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${inject('gatewayKey')}`, 'content-type': 'application/json' },
    body: JSON.stringify(input),
  });
  return (await response.json()) as Envelope;
}

/** The ids of the toolset's tools, from the catalog (`GET /tools?toolset=`), which holds others too. */
export async function catalogIds(): Promise<string[]> {
  const [some, all] = await Promise.all(
    [`?toolset=${TOOLSET}`, ''].map(async (query) => {
      const response = await fetch(`${inject('gatewayUrl')}/tools${query}`);
      const { data } = (await response.json()) as { data: { tools: { id: string }[] } };
      return data.tools.map((tool) => tool.id);
    }),
  );
  expect(some).toContain('save-message');
  expect(all!.length).toBeGreaterThan(some!.length);
  return some!;
}

/** The calls a model makes in a conversation of its own (`session`): one valid, one invalid. */
export function scenario(session: string) {
  const valid = { session_id: session, role: 'user', content: `Saved through ${session}.` };
  return { tool: 'save-message', valid, invalid: { ...valid, role: 'robot' } };
}

/** The messages saved in `session`, read back over HTTP. */
export async function savedMessages(session: string): Promise<{ role: string; content: string }[]> {
  const answer = await callOverHttp('get-messages', { session_id: session });
  if (!answer.success && answer.error?.code === 'NOT_FOUND') return [];
  expect(answer.success, answer.message).toBe(true);
  return answer.data.messages;
}

/** The valid call wrote its message, once, and the invalid one nothing. */
export async function expectOnlyTheValidCallSaved(calls: ReturnType<typeof scenario>): Promise<void> {
  const messages = await savedMessages(calls.valid.session_id);
  expect(messages.map(({ role, content }) => ({ role, content }))).toEqual([{ role: calls.valid.role, content: calls.valid.content }]);
}

/**
 * `read`, what the model is handed for the invalid call, carries the server's answer to it:
 * the error's message, each field's message and the hint (asked of the server over HTTP).
 */
export async function expectServerAnswer(read: string, calls: ReturnType<typeof scenario>): Promise<void> {
  const answer = await callOverHttp(calls.tool, calls.invalid);
  expect(answer.error?.code).toBe('VALIDATION_ERROR');
  const fields = answer.error!.details?.fields ?? [];
  expect(fields.map((field) => field.field)).toEqual(['role']);
  expect(answer.error!.hint).toBeTruthy();
  for (const text of [answer.error!.message, ...fields.map((field) => field.message), answer.error!.hint!]) expect(read).toContain(text);
}

/** Every string inside `value`, one per line: what a model reads of a structured tool result. */
export function textsOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(textsOf).join('\n');
  if (typeof value === 'object' && value !== null) return Object.values(value).map(textsOf).join('\n');
  return '';
}
