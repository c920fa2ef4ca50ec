/**
 * What every tool says when the database fails, through the real pipeline in workerd: the fault
 * proxy fails every query of the call before it reaches the database (so nothing is written), as a
 * transient outage (a read retried, then 503; a write run again until the database answers, here
 * past a short ceiling, then unconfirmed with the key that repeats it safely) or a permission error
 * (attempted once, 500). Each answer
 * follows the agent policy for database errors: apologise briefly and suggest a retry, with a hint
 * of the next step, and never SQL or a stack. The trace the project reads back keeps the database's
 * error and a stack, never the statement or its parameters.
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import { createGateway } from '../../shared/http/app.ts';
import { tenantA } from './helpers.ts';

type Data = Record<string, any>;

const services = env.TEST_SERVICES;
/** This file's own fault scripts: the proxy keeps them per database name. */
const DATABASE = 'database_errors';
const faultyUrl = services.faultyDatabaseUrl.replace(/\/[^/]*$/, `/${DATABASE}`);
/** Trusts a verified key for the whole file, so that the faults hit the tools' own queries, not the key's re-check. */
const gateway = createGateway(tools, { retryDelayMs: 10, settleWritesMs: 100, auth: { recheckAfterMs: 600_000, maxStaleMs: 600_000 } });

async function script(count: number, fault: 'unavailable' | 'permission_denied' = 'unavailable'): Promise<void> {
  const response = await fetch(services.faultControlUrl, { method: 'POST', body: JSON.stringify({ count, fault, database: DATABASE }) });
  expect(response.status).toBe(200);
}

async function call(toolId: string, input: unknown, through = gateway): Promise<{ status: number; body: Data }> {
  const ctx = createExecutionContext();
  const response = await through.fetch(
    new Request(`http://edge-tools.test/tools/${toolId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenantA.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(input),
    }),
    { ...env, DATABASE_URL: faultyUrl },
    ctx,
  );
  const body = (await response.json()) as Data;
  await script(0); // the trace is written after the answer: let it through
  await waitOnExecutionContext(ctx);
  return { status: response.status, body };
}

beforeAll(async () => {
  // Warms the API key cache through the proxy, so that the faults hit the tools' own queries.
  expect((await call('list-plans', {})).status).toBe(200);
});

afterEach(() => script(0));

/** The trace of a call as its project reads it (GET /executions/:trace_id). */
async function traceOf(traceId: string): Promise<Data> {
  const ctx = createExecutionContext();
  const response = await gateway.fetch(
    new Request(`http://edge-tools.test/executions/${traceId}`, { headers: { authorization: `Bearer ${tenantA.apiKey}` } }),
    env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  expect(response.status).toBe(200);
  return ((await response.json()) as Data).data;
}

/** SQL text: a statement's keywords, or drizzle's "Failed query: … params: …". */
const SQL_TEXT = /\bselect\s[^\n]*\sfrom\s|\binsert into\s|\bupdate \w+ set\s|\bdelete from\s|Failed query:|params:/i;

const POLICY = /^.+\. Apologise briefly to the user and suggest trying again .+\.$/;

const reads = tools.filter((tool) => !tool.acceptsIdempotencyKey);
const writes = tools.filter((tool) => tool.acceptsIdempotencyKey);

describe.each(reads.map((tool) => [tool.id, tool.example] as const))('%s', (toolId, example) => {
  it('answers a database outage with a retryable DATABASE_ERROR that apologises and suggests trying again in a few seconds', async () => {
    await script(1_000);
    const { status, body } = await call(toolId, example);
    expect(body.error, JSON.stringify(body)).toMatchObject({ code: 'DATABASE_ERROR', retryable: true });
    expect(status).toBe(503);
    expect(body.meta.attempts).toBe(3);
    expect(body.message).toMatch(POLICY);
    expect(body.message).toContain('suggest trying again in a few seconds');
    expect(body.error.hint).toContain('Repeat the same call');
    expect(JSON.stringify(body)).not.toMatch(/select |insert |update |delete from|stack|127\.0\.0\.1/i);
  });
});

describe.each(writes.map((tool) => [tool.id, tool.example] as const))('%s', (toolId, example) => {
  it('answers a database outage that outlasts the settling as an unconfirmed write, naming the key that repeats it without writing twice', async () => {
    await script(1_000);
    const { status, body } = await call(toolId, example);
    expect(body.error, JSON.stringify(body)).toMatchObject({
      code: 'DATABASE_ERROR',
      retryable: false,
      details: { reason: 'write_unconfirmed', idempotency_key: body.meta.trace_id },
    });
    expect(status).toBe(500);
    expect(body.meta.attempts).toBeGreaterThan(3);
    expect(body.message).toMatch(POLICY);
    expect(body.message).toContain(`with the idempotency key "${body.meta.trace_id}"`);
    expect(body.message).not.toMatch(/may or may not/);
    expect(body.error.hint).toContain(`Idempotency-Key: "${body.meta.trace_id}"`);
    expect(JSON.stringify(body)).not.toMatch(/select |insert |update |delete from|stack|127\.0\.0\.1/i);
  });
});

describe.each(tools.map((tool) => [tool.id, tool.example] as const))('%s', (toolId, example) => {
  it('answers a permanent database failure with a DATABASE_ERROR that apologises and suggests trying again later', async () => {
    await script(1_000, 'permission_denied');
    const { status, body } = await call(toolId, example);
    expect(body.error, JSON.stringify(body)).toMatchObject({ code: 'DATABASE_ERROR', retryable: false, details: { sqlstate: '42501' } });
    expect(status).toBe(500);
    expect(body.meta.attempts).toBe(1);
    expect(body.message).toMatch(POLICY);
    expect(body.message).toContain('suggest trying again later');
    expect(body.error.hint).toContain('try again later');
    expect(JSON.stringify(body)).not.toMatch(/select |insert |update |delete from|stack|127\.0\.0\.1/i);
    // The trace keeps what the database said, and no statement.
    const trace = await traceOf(body.meta.trace_id);
    expect(trace.error).toMatchObject({ code: 'DATABASE_ERROR', cause: { stack: expect.any(String) } });
    expect(JSON.stringify(trace.error)).toContain('42501');
    expect(JSON.stringify(trace.error)).not.toMatch(SQL_TEXT);
  });
});

describe('the re-check of an API key', () => {
  it('answers the same DATABASE_ERROR when the database cannot confirm the key, before a write runs', async () => {
    const checkingEveryCall = createGateway(tools, { retryDelayMs: 10, auth: { recheckAfterMs: 0 } });
    await script(1_000);
    const logMood = tools.find((tool) => tool.id === 'log-mood')!;
    const { status, body } = await call('log-mood', logMood.example, checkingEveryCall);
    expect(body.error, JSON.stringify(body)).toMatchObject({ code: 'DATABASE_ERROR', retryable: true });
    expect(status).toBe(503);
    expect(body.meta.attempts).toBe(0);
    expect(body.message).toMatch(POLICY);
    expect(body.error.hint).toContain('Repeat the same call');
  });
});
