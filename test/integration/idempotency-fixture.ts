/**
 * What the idempotency-*.test.ts files share: a tool call over HTTP through the real pipeline in
 * workerd (tenant C's key unless told otherwise, an Idempotency-Key header as given, the gateway of
 * every registered tool unless another is given), the rows a test counts, and valid log-mood
 * inputs.
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { sql } from 'drizzle-orm';
import { tools } from '../../functions/registry.ts';
import type { Env } from '../../shared/runtime/env.ts';
import { createGateway } from '../../shared/http/app.ts';
import { db, tenantC, uniqueTimestamp } from './helpers.ts';

/** An answer's JSON, as the tests read it. */
export type Data = Record<string, any>;
/** An HTTP answer: status, headers and JSON body. */
export interface Answer {
  status: number;
  headers: Headers;
  body: Data;
}

/** The services of the test setup (the fault proxy, Redis). */
export const services = env.TEST_SERVICES;
/** The gateway of every registered tool, retrying fast. */
export const registryGateway = createGateway(tools, { retryDelayMs: 10 });

/** An Idempotency-Key no other call uses. */
export const newKey = () => `key-${crypto.randomUUID()}`;
/** `key` as an RFC 8941 string. */
export const quoted = (key: string) => `"${key}"`;

/** How {@link call} calls. */
export interface CallOptions {
  key?: string | null;
  /** The raw Idempotency-Key header. */
  idempotencyKey?: string;
  gateway?: { fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> };
  env?: Partial<Env>;
}

/** Calls `toolId` over HTTP with `input`, waiting for the work the call left running (its trace, its stored answer). */
export async function call(
  toolId: string,
  input: unknown,
  { key = tenantC.apiKey, idempotencyKey, gateway = registryGateway, env: vars = {} }: CallOptions = {},
): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  const ctx = createExecutionContext();
  const response = await gateway.fetch(
    new Request(`http://edge-tools.test/tools/${toolId}`, { method: 'POST', headers, body: JSON.stringify(input) }),
    { ...env, ...vars } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: response.status, headers: response.headers, body: (await response.json()) as Data };
}

/** The `n` a count query answers. */
export async function count(query: ReturnType<typeof sql>): Promise<number> {
  return ((await db.execute(query)).rows[0] as { n: number }).n;
}

/** How many stored records `key` has (in any project, for any tool). */
export const records = (key: string) => count(sql`select count(*)::int as n from idempotency_keys where key = ${key}`);

/** A valid log-mood input for `userId`, at a timestamp no other test uses, with `overrides`. */
export const mood = (userId: string, overrides: Data = {}) => ({
  user_id: userId,
  mood: 'happy',
  energy_level: 6,
  timestamp: uniqueTimestamp(),
  ...overrides,
});
