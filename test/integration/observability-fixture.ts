/**
 * What the observability tests share: a gateway over five small tools whose outcomes are known
 * (echo succeeds, find-nothing answers NOT_FOUND, flaky fails once transiently, slow takes 300 ms,
 * throws throws), called as an agent calls it, and a known set of calls made by two fresh tenants
 * (so that every count read back is exact).
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import * as z from 'zod';
import { fail, ok } from '../../shared/core/contract.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { createGateway } from '../../shared/http/app.ts';
import type { Env } from '../../shared/runtime/env.ts';
import { workerModule } from '../../shared/runtime/worker.ts';
import { createTenant } from './helpers.ts';

/** The services of the test setup (the OTLP receiver, Redis). */
export const services = env.TEST_SERVICES;
/** Whether redis-server runs (the rate limit needs it). */
export const hasRedis = services.redisUrl !== '';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const text = z.strictObject({ text: z.string().max(100) });

const echo = defineTool({
  id: 'echo',
  toolset: 'documents',
  title: 'Echo',
  annotations: READ_ONLY,
  description: 'Echoes a text.',
  input: text,
  output: z.object({ text: z.string() }),
  example: { text: 'hi' },
  async execute({ text }) {
    return ok({ text }, 'Echoed.');
  },
});

const missing = defineTool({
  id: 'find-nothing',
  toolset: 'documents',
  title: 'Find nothing',
  annotations: READ_ONLY,
  description: 'Never finds what it is asked for.',
  input: text,
  output: z.object({}),
  example: { text: 'x' },
  async execute({ text }) {
    return fail('NOT_FOUND', `Nothing called '${text}' exists.`, { details: { entity_type: 'thing' } });
  },
});

/** Fails its first attempt the way a lost database connection does (with a NUL in the error, which jsonb refuses), then succeeds. */
const attemptsByCall = new Map<string, number>();
export const flaky = defineTool({
  id: 'flaky',
  toolset: 'documents',
  title: 'Flaky',
  annotations: READ_ONLY,
  description: 'Fails transiently once.',
  input: text,
  output: z.object({ attempt: z.int() }),
  example: { text: 'x' },
  async execute(_input, { traceId }) {
    const attempt = (attemptsByCall.get(traceId) ?? 0) + 1;
    attemptsByCall.set(traceId, attempt);
    if (attempt === 1) {
      return fail('DATABASE_ERROR', 'The database is temporarily unavailable.', {
        retryable: true,
        status: 503,
        cause: new Error('connection reset\u0000 by peer'),
      });
    }
    return ok({ attempt }, `Succeeded on attempt ${attempt}.`);
  },
});

const slow = defineTool({
  id: 'slow',
  toolset: 'documents',
  title: 'Slow',
  annotations: READ_ONLY,
  description: 'Takes a while.',
  input: text,
  output: z.object({}),
  example: { text: 'x' },
  async execute() {
    await sleep(300);
    return ok({}, 'Done, slowly.');
  },
});

const throwing = defineTool({
  id: 'throws',
  toolset: 'documents',
  title: 'Throws',
  annotations: READ_ONLY,
  description: 'Throws.',
  input: text,
  output: z.object({}),
  example: { text: 'x' },
  async execute() {
    throw new Error('kaboom in the tool');
  },
});

/** The gateway over the five tools, as a worker module (fetch and the Cron Trigger's scheduled). */
export const worker = workerModule(createGateway([echo, missing, flaky, slow, throwing], { retryDelayMs: 5, slowCallMs: 250 }));

/** A tenant of the test's own, with its key. */
export type Tenant = Awaited<ReturnType<typeof createTenant>>;

/** Sends `request` to the worker and waits for its `waitUntil` work. */
export async function send(request: Request, callEnv: Env = env) {
  const ctx = createExecutionContext();
  const response = await worker.fetch(request, callEnv, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

/** POSTs a call of `tool` with `tenant`'s key: the status and the parsed envelope. */
export async function call(
  tenant: Tenant,
  tool: string,
  body: unknown,
  { headers = {}, callEnv }: { headers?: Record<string, string>; callEnv?: Env } = {},
) {
  const response = await send(
    new Request(`http://edge-tools.test/tools/${tool}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    }),
    callEnv,
  );
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** GETs `path` with `tenant`'s key (none for null): the status, headers and parsed envelope. */
export async function get<T = any>(tenant: Tenant | null, path: string) {
  const response = await send(
    new Request(`http://edge-tools.test${path}`, { headers: tenant ? { authorization: `Bearer ${tenant.apiKey}` } : {} }),
  );
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as { success: boolean; data: T; message: string; error: any; meta: any },
  };
}

/** The trace and span of the caller whose traceparent the first known call carries. */
export const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
export const CALLER_SPAN = '00f067aa0ba902b7';

/**
 * Makes the known calls: four echoes (the first a child of the caller's trace), two NOT_FOUND, one
 * retried, one slow, one throwing, three refused, and one call of the other tenant. Their trace
 * ids are recorded in `ids` by outcome.
 */
export async function makeKnownCalls(ids: Record<string, string[]>): Promise<{ tenant: Tenant; other: Tenant }> {
  const remember = (name: string, traceId: string) => (ids[name] ??= []).push(traceId);
  const [tenant, other] = await Promise.all([createTenant('Observed'), createTenant('Other')]);
  for (let i = 0; i < 4; i++) {
    const headers: Record<string, string> = i === 0 ? { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` } : {};
    remember('echo', (await call(tenant, 'echo', { text: `hello ${i}` }, { headers })).body.meta.trace_id);
  }
  for (let i = 0; i < 2; i++) remember('missing', (await call(tenant, 'find-nothing', { text: `thing ${i}` })).body.meta.trace_id);
  remember('flaky', (await call(tenant, 'flaky', { text: 'x' })).body.meta.trace_id);
  remember('slow', (await call(tenant, 'slow', { text: 'x' })).body.meta.trace_id);
  remember('throws', (await call(tenant, 'throws', { text: 'x' })).body.meta.trace_id);
  remember('refused', (await call(tenant, 'echo', { text: 'x', surprise: true })).body.meta.trace_id);
  remember('refused', (await call(tenant, 'echo', { text: 42 })).body.meta.trace_id);
  remember('refused', (await call(tenant, 'find-nothing', {})).body.meta.trace_id);
  remember('other', (await call(other, 'echo', { text: 'the other tenant' })).body.meta.trace_id);
  return { tenant, other };
}

/** The trace ids of the known calls that executed (not the refused ones). */
export function executedOf(ids: Record<string, string[]>): string[] {
  return ['echo', 'missing', 'flaky', 'slow', 'throws'].flatMap((name) => ids[name]!);
}
