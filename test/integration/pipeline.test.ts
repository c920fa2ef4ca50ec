/**
 * The pipeline's guarantees that no registered tool exercises on purpose: a tool that throws, or
 * answers outside its declared output, still yields the envelope, and the stack stays in the trace;
 * the trace keeps whatever an execution carried; unsuccessful calls are logged; progress a retried
 * attempt repeats is not forwarded again.
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import * as z from 'zod';
import { toolExecutions } from '../../drizzle/schema.ts';
import { ProviderError } from '../../shared/providers/types.ts';
import { createGateway } from '../../shared/http/app.ts';
import { ok } from '../../shared/core/contract.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { createTenant, db, tenantA } from './helpers.ts';

const input = z.strictObject({ text: z.string().max(100) });

const throwing = defineTool({
  id: 'always-throws',
  toolset: 'documents',
  title: 'Test tool always-throws',
  annotations: READ_ONLY,
  description: 'Throws.',
  input,
  output: z.object({}),
  example: { text: 'boom' },
  async execute() {
    throw new Error('secret internal detail');
  },
});

const lying = defineTool({
  id: 'wrong-output',
  toolset: 'documents',
  title: 'Test tool wrong-output',
  annotations: READ_ONLY,
  description: 'Answers outside its output schema.',
  input,
  output: z.object({ count: z.int() }),
  example: { text: 'x' },
  async execute() {
    return ok({ count: 'many' } as unknown as { count: number }, 'Counted.');
  },
});

const echo = defineTool({
  id: 'echo-project',
  toolset: 'documents',
  title: 'Test tool echo-project',
  annotations: READ_ONLY,
  description: 'Answers the calling project.',
  input,
  output: z.object({ project_id: z.string(), text: z.string() }),
  example: { text: 'x' },
  async execute({ text }, { project }) {
    return ok({ project_id: project.id, text }, 'Echoed.');
  },
});

/** Text Postgres cannot keep in jsonb: NUL, both kinds of unpaired surrogate, and their neighbours. */
const HOSTILE_TEXT = 'nul \u0000 high \uD83D low \uDE00 pair 😀 line \u2028 end';

const hostileOutput = defineTool({
  id: 'hostile-output',
  toolset: 'documents',
  title: 'Test tool hostile-output',
  annotations: READ_ONLY,
  description: 'Answers text that jsonb cannot store, in values and keys.',
  input,
  output: z.object({ text: z.string(), nested: z.record(z.string(), z.array(z.string())) }),
  example: { text: 'x' },
  async execute({ text }) {
    return ok({ text: `${text} ${HOSTILE_TEXT}`, nested: { [HOSTILE_TEXT]: [HOSTILE_TEXT] } }, 'Answered.');
  },
});

const hostileError = defineTool({
  id: 'hostile-error',
  toolset: 'documents',
  title: 'Test tool hostile-error',
  annotations: READ_ONLY,
  description: 'Throws an error whose message jsonb cannot store.',
  input,
  output: z.object({}),
  example: { text: 'x' },
  async execute() {
    throw new Error(`upstream said: ${HOSTILE_TEXT}`);
  },
});

const flaky = defineTool({
  id: 'always-unavailable',
  toolset: 'documents',
  title: 'Test tool always-unavailable',
  annotations: READ_ONLY,
  description: 'Fails with a transient provider error on every attempt.',
  input,
  output: z.object({}),
  example: { text: 'x' },
  async execute() {
    throw new ProviderError(`The provider answered 503: ${HOSTILE_TEXT}`, { provider: 'test', status: 503, retryable: true });
  },
});

/** Attempts of `progress-after-retry` so far, by the call's text. */
const progressAttempts = new Map<string, number>();

const progressing = defineTool({
  id: 'progress-after-retry',
  toolset: 'documents',
  title: 'Test tool progress-after-retry',
  annotations: READ_ONLY,
  description: 'Reports 1 and 2 of 3, fails transiently once, then reports 1, 2 and 3 of 3.',
  input,
  output: z.object({}),
  example: { text: 'x' },
  async execute({ text }, { progress }) {
    const attempt = (progressAttempts.get(text) ?? 0) + 1;
    progressAttempts.set(text, attempt);
    progress(1, 3, 'one');
    progress(2, 3, 'two');
    if (attempt === 1) throw new ProviderError('The provider answered 503.', { provider: 'test', status: 503, retryable: true });
    progress(3, 3, 'three');
    return ok({}, 'Done.');
  },
});

const app = createGateway([throwing, lying, echo, hostileOutput, hostileError, flaky, progressing], { retryDelayMs: 10 });

async function call(toolId: string, body: unknown, key = tenantA.apiKey) {
  const ctx = createExecutionContext();
  const response = await app.fetch(
    new Request(`http://edge-tools.test/tools/${toolId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
    env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

describe('pipeline', () => {
  it('forwards only progress that increases: a retried attempt starting again from zero is not reported twice', async () => {
    const contexts: ExecutionContext[] = [];
    const client = new Client({ name: 'edge-tools-test', version: '2.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('http://edge-tools.test/mcp'), {
        fetch: async (url: string | URL, init?: RequestInit) => {
          const ctx = createExecutionContext();
          contexts.push(ctx);
          return app.fetch(new Request(url, init), env, ctx);
        },
        requestInit: { headers: { authorization: `Bearer ${tenantA.apiKey}` } },
      }),
    );
    const received: { progress: number; total?: number; message?: string }[] = [];
    const result = await client.callTool(
      { name: 'progress-after-retry', arguments: { text: crypto.randomUUID() } },
      { onprogress: (progress) => received.push(progress) },
    );
    await client.close();
    await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));
    expect(result.structuredContent).toMatchObject({ success: true, meta: { attempts: 2 } });
    expect(received.map(({ progress, total, message }) => ({ progress, total, message }))).toEqual([
      { progress: 1, total: 3, message: 'one' },
      { progress: 2, total: 3, message: 'two' },
      { progress: 3, total: 3, message: 'three' },
    ]);
  });

  it('turns a thrown error into UNKNOWN_ERROR; the stack goes to the trace only', async () => {
    const { status, body } = await call('always-throws', { text: 'boom' });
    expect(status).toBe(500);
    expect(body).toMatchObject({ success: false, error: { code: 'UNKNOWN_ERROR', retryable: false }, meta: { attempts: 1 } });
    expect(JSON.stringify(body)).not.toContain('secret internal detail');
    expect(body.error.message).toContain(body.meta.trace_id);
    const [trace] = await db.select().from(toolExecutions).where(eq(toolExecutions.id, body.meta.trace_id));
    expect(trace).toMatchObject({ status: 'error', errorCode: 'UNKNOWN_ERROR' });
    expect(JSON.stringify(trace!.error)).toContain('secret internal detail');
    expect((trace!.error as { cause: { stack: string } }).cause.stack).toMatch(/Error: secret internal detail/);
  });

  it('refuses to pass on output that breaks the declared schema', async () => {
    const { status, body } = await call('wrong-output', { text: 'x' });
    expect(status).toBe(500);
    expect(body.error.code).toBe('UNKNOWN_ERROR');
    expect(body.error.message).toContain('does not match its declared output');
  });

  it('gives the tool the project of the API key', async () => {
    const { status, body } = await call('echo-project', { text: 'hi' });
    expect(status).toBe(200);
    expect(body.data).toEqual({ project_id: tenantA.projectId, text: 'hi' });
  });
});

async function traceOf(traceId: string) {
  const [trace] = await db.select().from(toolExecutions).where(eq(toolExecutions.id, traceId));
  return trace;
}

describe('the trace keeps a faithful copy of every execution', () => {
  it('stores an output with NUL and unpaired surrogates, in values and keys, and reads it back exactly', async () => {
    const { status, body } = await call('hostile-output', { text: 'in 😀 \u2028' });
    expect(status).toBe(200);
    const trace = await traceOf(body.meta.trace_id);
    expect(trace).toMatchObject({ status: 'success', tool: 'hostile-output', projectId: tenantA.projectId });
    expect(trace!.input).toEqual({ text: 'in 😀 \u2028' });
    expect(trace!.output).toEqual({ text: `in 😀 \u2028 ${HOSTILE_TEXT}`, nested: { [HOSTILE_TEXT]: [HOSTILE_TEXT] } });
    expect(trace!.output).toEqual(body.data);
  });

  it('stores the errors of retried attempts whose messages jsonb would refuse', async () => {
    const { body } = await call('always-unavailable', { text: 'x' });
    expect(body.meta.attempts).toBe(3);
    const trace = await traceOf(body.meta.trace_id);
    const retried = trace!.retryErrors as { attempt: number; cause: { message: string } }[];
    expect(retried.map((error) => [error.attempt, error.cause.message])).toEqual([
      [1, `The provider answered 503: ${HOSTILE_TEXT}`],
      [2, `The provider answered 503: ${HOSTILE_TEXT}`],
    ]);
  });

  it('stores an error whose message jsonb would refuse', async () => {
    const { status, body } = await call('hostile-error', { text: 'x' });
    expect(status).toBe(500);
    const trace = await traceOf(body.meta.trace_id);
    expect(trace).toMatchObject({ status: 'error', errorCode: 'UNKNOWN_ERROR' });
    expect((trace!.error as { cause: { message: string } }).cause.message).toBe(`upstream said: ${HOSTILE_TEXT}`);
  });
});

describe('unsuccessful calls are logged, once each, in one place', () => {
  const lines = (spy: MockInstance, event: string) =>
    spy.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>).filter((line) => line.event === event);
  let warn: MockInstance;
  let error: MockInstance;
  beforeEach(() => {
    warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    error = vi.spyOn(console, 'error').mockImplementation(() => {});
  });
  afterEach(() => vi.restoreAllMocks());

  it('logs a validation refusal as a warning with the tool, the trace id and the failing fields', async () => {
    const { status, body } = await call('echo-project', { text: 'a\u0000b', extra: 1 });
    expect(status).toBe(400);
    expect(lines(warn, 'call_refused')).toEqual([
      {
        level: 'warn',
        event: 'call_refused',
        tool: 'echo-project',
        trace_id: body.meta.trace_id,
        project_id: tenantA.projectId,
        code: 'VALIDATION_ERROR',
        status: 400,
        retryable: false,
        fields: [{ field: 'text', code: 'unsafe_text' }],
      },
    ]);
    // A refusal is not an execution: no trace row.
    expect(await traceOf(body.meta.trace_id)).toBeUndefined();
  });

  it("logs a failure after the retries with its attempts, as an error when it is the service's", async () => {
    const { status, body } = await call('always-unavailable', { text: 'x' });
    expect(status).toBe(502);
    expect(body.meta.attempts).toBe(3);
    expect(lines(error, 'call_failed')).toEqual([
      expect.objectContaining({
        tool: 'always-unavailable',
        trace_id: body.meta.trace_id,
        code: 'UPSTREAM_ERROR',
        status: 502,
        retryable: true,
        attempts: 3,
      }),
    ]);
    expect(lines(warn, 'call_refused')).toEqual([]);
  });

  it.skipIf(env.TEST_SERVICES.redisUrl === '')('logs every 429 refusal', async () => {
    const { projectId, apiKey: key } = await createTenant('Logged limit', { rateLimitPerMinute: 1 });
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await call('echo-project', { text: 'x' }, key));
    expect(answers.map((answer) => answer.status)).toEqual([200, 429, 429]);
    expect(lines(warn, 'call_refused')).toEqual(
      answers.slice(1).map((answer) =>
        expect.objectContaining({
          tool: 'echo-project',
          trace_id: answer.body.meta.trace_id,
          project_id: projectId,
          code: 'RATE_LIMITED',
          status: 429,
        }),
      ),
    );
  });
});
