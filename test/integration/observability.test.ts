/**
 * Observability through the real worker in workerd, against the Neon stand-in and the OTLP
 * receiver of the test setup: the executions and metrics APIs read back known calls of fresh
 * tenants (so every count is exact), another tenant sees none of them, spans reach the receiver
 * with the GenAI conventions and the caller's parent span, and retention deletes old rows only.
 */
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_DESCRIPTION,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
} from '@opentelemetry/semantic-conventions/incubating';
import { env } from 'cloudflare:workers';
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from 'cloudflare:test';
import { and, eq, gte, inArray, sql } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { idempotencyKeys, toolExecutions, toolRefusals } from '../../drizzle/schema.ts';
import { fail, ok } from '../../shared/core/contract.ts';
import { encodeCursor } from '../../shared/core/cursor.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { createGateway } from '../../shared/http/app.ts';
import type { ExecutionDetail, ExecutionsPage } from '../../shared/observability/executions.ts';
import type { Metrics } from '../../shared/observability/metrics.ts';
import { deleteExpired } from '../../shared/observability/retention.ts';
import type { Env } from '../../shared/runtime/env.ts';
import { workerModule } from '../../shared/runtime/worker.ts';
import { createTenant, db } from './helpers.ts';

const services = env.TEST_SERVICES;
/** The project's own span attribute naming the call's trace UUID (meta.trace_id). */
const ATTR_EDGE_TOOLS_TRACE_ID = 'edge_tools.trace_id';
/** OTLP's enum values and span flags (opentelemetry/proto/trace/v1/trace.proto). */
const SPAN_KIND_INTERNAL = 1;
const STATUS_CODE_UNSET = 0;
const STATUS_CODE_ERROR = 2;
const TRACE_FLAG_SAMPLED = 0x1;
const SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE = 0x100;
const SPAN_FLAGS_CONTEXT_IS_REMOTE = 0x200;
const hasRedis = services.redisUrl !== '';
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
const flaky = defineTool({
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

const worker = workerModule(createGateway([echo, missing, flaky, slow, throwing], { retryDelayMs: 5, slowCallMs: 250 }));

type Tenant = Awaited<ReturnType<typeof createTenant>>;

async function send(request: Request, callEnv: Env = env) {
  const ctx = createExecutionContext();
  const response = await worker.fetch(request, callEnv, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

async function call(
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

async function get<T = any>(tenant: Tenant | null, path: string) {
  const response = await send(
    new Request(`http://edge-tools.test${path}`, { headers: tenant ? { authorization: `Bearer ${tenant.apiKey}` } : {} }),
  );
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as { success: boolean; data: T; message: string; error: any; meta: any },
  };
}

/** Linear interpolation between closest ranks: what Postgres' percentile_cont computes, written independently. */
function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = fraction * (sorted.length - 1);
  const low = Math.floor(rank);
  return sorted[low]! + (sorted[Math.ceil(rank)]! - sorted[low]!) * (rank - low);
}

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

describe('executions and metrics of known calls', () => {
  let tenant: Tenant;
  let other: Tenant;
  const ids: Record<string, string[]> = {};
  const remember = (name: string, traceId: string) => (ids[name] ??= []).push(traceId);

  beforeAll(async () => {
    [tenant, other] = await Promise.all([createTenant('Observed'), createTenant('Other')]);
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
  }, 60_000);

  const executed = () => ['echo', 'missing', 'flaky', 'slow', 'throws'].flatMap((name) => ids[name]!);

  it("GET /executions lists exactly the executions of the key's project, newest first, refusals excluded", async () => {
    const { status, body } = await get<ExecutionsPage>(tenant, '/executions?limit=100');
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    const listed = body.data.executions;
    expect(listed.map((e) => e.trace_id).sort()).toEqual(executed().sort());
    expect(body.data.next_cursor).toBeNull();
    // Newest first, ties broken by id: the order the cursor relies on.
    const order = listed.map((e) => [e.started_at, e.trace_id].join(' '));
    expect(order).toEqual([...order].sort().reverse());
    const flakyRow = listed.find((e) => e.trace_id === ids.flaky![0])!;
    expect(flakyRow).toMatchObject({ tool: 'flaky', status: 'success', error_code: null, attempts: 2, performance_warning: false });
    expect(flakyRow).not.toHaveProperty('input');
    expect(listed.find((e) => e.trace_id === ids.slow![0])).toMatchObject({ performance_warning: true });
    expect(listed.find((e) => e.trace_id === ids.throws![0])).toMatchObject({
      status: 'failure',
      error_code: 'UNKNOWN_ERROR',
      attempts: 1,
    });
  });

  it('filters by tool, status, error code, duration and time range', async () => {
    const idsOf = async (query: string) =>
      (await get<ExecutionsPage>(tenant, `/executions?${query}`)).body.data.executions.map((e) => e.trace_id).sort();
    expect(await idsOf('tool=echo')).toEqual([...ids.echo!].sort());
    expect(await idsOf('status=failure')).toEqual([...ids.missing!, ...ids.throws!].sort());
    expect(await idsOf('status=success&tool=find-nothing')).toEqual([]);
    expect(await idsOf('error_code=NOT_FOUND')).toEqual([...ids.missing!].sort());
    // Durations are measured, so the judge is the trace itself: exactly the executions that took that long.
    const slowRows = await db
      .select({ id: toolExecutions.id })
      .from(toolExecutions)
      .where(and(eq(toolExecutions.projectId, tenant.projectId), gte(toolExecutions.durationMs, 290)));
    expect(slowRows.map((row) => row.id)).toContain(ids.slow![0]);
    expect(await idsOf('min_duration_ms=290')).toEqual(slowRows.map((row) => row.id).sort());
    expect(await idsOf('since=2000-01-01T00:00:00Z&until=2001-01-01T00:00:00Z')).toEqual([]);
    expect(await idsOf(`since=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`)).toEqual(executed().sort());
    expect(await idsOf(`otel_trace_id=${CALLER_TRACE.toUpperCase()}`)).toEqual([ids.echo![0]]);
  });

  it('pages with an opaque cursor: every execution once, truncated until the last page', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const { body }: { body: { success: boolean; data: ExecutionsPage; meta: { truncated?: boolean } } } = await get<ExecutionsPage>(
        tenant,
        `/executions?limit=4${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(body.success).toBe(true);
      seen.push(...body.data.executions.map((e) => e.trace_id));
      cursor = body.data.next_cursor;
      expect(body.meta.truncated === true).toBe(cursor !== null);
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(9);
    expect([...seen].sort()).toEqual(executed().sort());

    const forged = await get(tenant, '/executions?cursor=bm90LWEtY3Vyc29y');
    expect(forged.status).toBe(400);
    expect(forged.body.error.details.fields[0].field).toBe('cursor');
  });

  it('detailed listings carry input and output or error', async () => {
    const { body } = await get<ExecutionsPage>(tenant, '/executions?tool=find-nothing&response_format=detailed');
    expect(body.data.executions).toHaveLength(2);
    for (const execution of body.data.executions) {
      expect(execution.input).toMatchObject({ text: expect.stringMatching(/^thing \d$/) });
      expect(execution.output).toBeNull();
      expect(execution.error).toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('Nothing called') });
    }
    const echoes = await get<ExecutionsPage>(tenant, '/executions?tool=echo&response_format=detailed&limit=1');
    expect(echoes.body.data.executions[0]).toMatchObject({ input: { text: 'hello 3' }, output: { text: 'hello 3' }, error: null });
  });

  it('refuses bad queries with the field at fault, and unknown parameters by name', async () => {
    const cases: [string, string][] = [
      ['status=broken', 'status'],
      ['limit=0', 'limit'],
      ['limit=ten', 'limit'],
      ['since=yesterday', 'since'],
      ['error_code=OOPS', 'error_code'],
      ['colour=blue', 'colour'],
      ['tool=a&tool=b', 'tool'],
      // Instants Postgres cannot take (500 DATABASE_ERROR before), refused as tool inputs refuse them.
      ['until=0000-01-01T00:00:00Z', 'until'],
      ['since=2025-10-05T14:30:00-23:59', 'since'],
      ['since=9999-12-31T23:59:59-15:59', 'since'],
      [`cursor=${encodeCursor({ before: ['0000-01-01T00:00:00Z', crypto.randomUUID()] })}`, 'cursor'],
    ];
    for (const [query, field] of cases) {
      const { status, body } = await get(tenant, `/executions?${query}`);
      expect(status, query).toBe(400);
      expect(body.error.code).toBe('VALIDATION_ERROR');
      expect(
        body.error.details.fields.map((f: { field: string }) => f.field),
        query,
      ).toContain(field);
      expect(body.error.hint).toContain('GET /executions');
    }
  });

  it('GET /executions/:trace_id gives one execution whole: input, error with stack, retries, actor, trace context', async () => {
    const thrown = await get<ExecutionDetail>(tenant, `/executions/${ids.throws![0]}`);
    expect(thrown.status).toBe(200);
    expect(thrown.body.data).toMatchObject({
      trace_id: ids.throws![0],
      tool: 'throws',
      status: 'failure',
      error_code: 'UNKNOWN_ERROR',
      input: { text: 'x' },
      output: null,
      attempts: 1,
      retry_errors: [],
      actor: { api_key_id: tenant.keyId, api_key_name: 'Observed key' },
    });
    expect(thrown.body.data.error).toMatchObject({
      code: 'UNKNOWN_ERROR',
      cause: { message: 'kaboom in the tool', stack: expect.stringContaining('kaboom in the tool') },
    });

    const retried = await get<ExecutionDetail>(tenant, `/executions/${ids.flaky![0]}`);
    expect(retried.body.data).toMatchObject({ status: 'success', attempts: 2, output: { attempt: 2 }, error: null });
    expect(retried.body.data.retry_errors).toEqual([
      {
        attempt: 1,
        code: 'DATABASE_ERROR',
        message: 'The database is temporarily unavailable.',
        time_ms: expect.any(Number),
        cause: expect.objectContaining({ message: 'connection reset\u0000 by peer' }),
      },
    ]);

    // Without a traceparent the execution starts its own trace, named after its trace id.
    const own = await get<ExecutionDetail>(tenant, `/executions/${ids.echo![1]}`);
    expect(own.body.data.otel).toEqual({
      trace_id: ids.echo![1]!.replace(/-/g, ''),
      span_id: expect.stringMatching(/^[0-9a-f]{16}$/),
      parent_span_id: null,
    });
    // With one, it is a child of the caller's span; both spellings of the id find it.
    const child = await get<ExecutionDetail>(tenant, `/executions/${ids.echo![0]!.toUpperCase()}`);
    expect(child.body.data.otel).toEqual({
      trace_id: CALLER_TRACE,
      span_id: expect.stringMatching(/^[0-9a-f]{16}$/),
      parent_span_id: CALLER_SPAN,
    });
    expect((await get(tenant, `/executions/${ids.echo![0]!.replace(/-/g, '')}`)).body.data.trace_id).toBe(ids.echo![0]);
  });

  it('answers NOT_FOUND for unknown ids, refused calls and other tenants, and VALIDATION_ERROR for malformed ids', async () => {
    const refused = await get(tenant, `/executions/${ids.refused![0]}`);
    expect(refused.status).toBe(404);
    expect(refused.body.error).toMatchObject({
      code: 'NOT_FOUND',
      details: { entity_type: 'execution', refused_with: 'VALIDATION_ERROR' },
    });
    expect(refused.body.error.message).toContain('refused with VALIDATION_ERROR before executing');

    const unknown = await get(tenant, `/executions/${crypto.randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.hint).toContain('GET /executions');

    const malformed = await get(tenant, '/executions/not-a-trace-id');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.details.fields[0].field).toBe('trace_id');
  });

  it("isolates tenants: the other key sees its own execution and nothing of this project's", async () => {
    const listing = await get<ExecutionsPage>(other, '/executions?limit=100');
    expect(listing.body.data.executions.map((e) => e.trace_id)).toEqual(ids.other);
    for (const traceId of [...executed(), ...ids.refused!]) {
      const { status, body } = await get(other, `/executions/${traceId}`);
      expect(status).toBe(404);
      expect(JSON.stringify(body)).not.toContain('hello');
    }
    const metrics = await get<Metrics>(other, '/metrics');
    expect(metrics.body.data.totals).toMatchObject({ calls: 1, successes: 1, validation_refusals: 0 });
    expect(metrics.body.data.tools.map((t) => t.tool)).toEqual(['echo']);
    // And this project's rows are still all there.
    const [{ count }] = (await db
      .select({ count: sql<number>`count(*)::int` })
      .from(toolExecutions)
      .where(eq(toolExecutions.projectId, tenant.projectId))) as [{ count: number }];
    expect(count).toBe(9);
  });

  it('requires a key on every read route', async () => {
    for (const path of ['/executions', `/executions/${ids.echo![0]}`, '/metrics', '/metrics?format=prometheus']) {
      const { status, body } = await get(null, path);
      expect(status, path).toBe(401);
      expect(body.error.code).toBe('UNAUTHENTICATED');
    }
  });

  it('GET /metrics counts the calls per tool, their failures by code, retries, warnings and refusals', async () => {
    const { status, body } = await get<Metrics>(tenant, '/metrics');
    expect(status).toBe(200);
    const { totals, tools, window } = body.data;
    expect(Date.parse(window.until) - Date.parse(window.since)).toBe(86_400_000);
    expect(totals).toMatchObject({
      calls: 9,
      successes: 6,
      failures: 3,
      success_rate: Math.round((6 / 9) * 10_000) / 10_000,
      failures_by_code: { NOT_FOUND: 2, UNKNOWN_ERROR: 1 },
      retried_calls: 1,
      performance_warnings: 1,
      validation_refusals: 3,
      rate_limit_refusals: 0,
      busy_refusals: 0,
    });
    const byTool = Object.fromEntries(tools.map((tool) => [tool.tool, tool]));
    expect(Object.keys(byTool).sort()).toEqual(['echo', 'find-nothing', 'flaky', 'slow', 'throws']);
    expect(tools[0]!.tool).toBe('echo');
    expect(byTool.echo).toMatchObject({ calls: 4, successes: 4, failures: 0, success_rate: 1, validation_refusals: 2 });
    expect(byTool['find-nothing']).toMatchObject({
      calls: 2,
      successes: 0,
      success_rate: 0,
      failures_by_code: { NOT_FOUND: 2 },
      validation_refusals: 1,
    });
    expect(byTool.flaky).toMatchObject({ calls: 1, retried_calls: 1 });
    expect(byTool.slow).toMatchObject({ performance_warnings: 1 });
    expect(byTool.slow!.duration_ms.p50).toBeGreaterThanOrEqual(300);

    // The percentiles agree with an independent computation over the durations the trace holds.
    const rows = await db
      .select({ tool: toolExecutions.tool, duration: toolExecutions.durationMs, queued: toolExecutions.queuedMs })
      .from(toolExecutions)
      .where(eq(toolExecutions.projectId, tenant.projectId));
    const durations = rows.map((row) => row.duration);
    for (const [key, fraction] of [
      ['p50', 0.5],
      ['p95', 0.95],
      ['p99', 0.99],
    ] as const) {
      expect(totals.duration_ms[key]).toBeCloseTo(percentile(durations, fraction), 1);
    }
    expect(totals.duration_ms.max).toBeCloseTo(Math.max(...durations), 1);
    expect(totals.duration_ms.avg).toBeCloseTo(durations.reduce((a, b) => a + b, 0) / durations.length, 1);
    const echoDurations = rows.filter((row) => row.tool === 'echo').map((row) => row.duration);
    expect(byTool.echo!.duration_ms.p95).toBeCloseTo(percentile(echoDurations, 0.95), 1);
    expect(totals.queued_ms.p95).toBeCloseTo(
      percentile(
        rows.map((row) => row.queued),
        0.95,
      ),
      1,
    );
  });

  it('GET /metrics has a series covering the window, and honours tool and window', async () => {
    const { body } = await get<Metrics>(tenant, '/metrics?window=1h');
    const { series, window } = body.data;
    expect(window.bucket_seconds).toBe(60);
    expect(series).toHaveLength(60);
    expect(series[0]!.start).toBe(window.since);
    expect(series.reduce((sum, point) => sum + point.calls, 0)).toBe(9);
    expect(series.reduce((sum, point) => sum + point.failures, 0)).toBe(3);
    expect(series.filter((point) => point.calls === 0).every((point) => point.duration_ms_p50 === null)).toBe(true);

    const one = await get<Metrics>(tenant, '/metrics?tool=find-nothing&window=7d');
    expect(one.body.data.tools.map((t) => t.tool)).toEqual(['find-nothing']);
    expect(one.body.data.totals).toMatchObject({ calls: 2, failures: 2, validation_refusals: 1 });
    expect(one.body.data.window.bucket_seconds).toBe(10_800);

    const past = await get<Metrics>(tenant, '/metrics?since=2020-01-01T00:00:00Z&until=2020-01-02T00:00:00Z');
    expect(past.body.data.totals).toMatchObject({ calls: 0, success_rate: null, duration_ms: { p50: null } });
    expect(past.body.data.tools).toEqual([]);
  });

  it('refuses a contradictory or unreadable window', async () => {
    for (const [query, field] of [
      ['window=24h&since=2025-01-01T00:00:00Z', 'window'],
      ['window=5x', 'window'],
      ['since=2025-01-02T00:00:00Z&until=2025-01-01T00:00:00Z', 'since'],
      ['window=999d', 'window'],
      ['format=xml', 'format'],
      // Instants outside the accepted years (a window cannot reach back before them: it is at most 400 days).
      ['until=0999-12-31T00:00:00Z', 'until'],
      ['since=2025-10-05T14:30:00%2B23:59', 'since'],
    ] as const) {
      const { status, body } = await get(tenant, `/metrics?${query}`);
      expect(status, query).toBe(400);
      expect(body.error.details.fields[0].field, query).toBe(field);
    }
  });

  it("GET /refusals lists the refused calls with each field and its problem, and only this project's", async () => {
    const { status, body } = await get<{
      refusals: { trace_id: string; tool: string; code: string; message: string; fields: { field: string; code: string }[] }[];
    }>(tenant, '/refusals');
    expect(status).toBe(200);
    const refusals = body.data.refusals;
    expect(refusals.map((r) => r.trace_id).sort()).toEqual([...ids.refused!].sort());
    const unknownField = refusals.find((r) => r.trace_id === ids.refused![0])!;
    expect(unknownField).toMatchObject({ tool: 'echo', code: 'VALIDATION_ERROR', message: expect.stringContaining('surprise') });
    expect(unknownField.fields).toEqual([expect.objectContaining({ field: 'surprise', code: 'unknown_field' })]);
    expect(refusals.find((r) => r.trace_id === ids.refused![1])!.fields).toEqual([
      expect.objectContaining({ field: 'text', code: 'invalid_type' }),
    ]);
    expect((await get(tenant, '/refusals?tool=find-nothing')).body.data.refusals).toHaveLength(1);
    expect((await get(other, '/refusals')).body.data.refusals).toEqual([]);
  });

  it('accepts a window in seconds, and answers a window in the future as empty', async () => {
    const short = await get<Metrics>(tenant, '/metrics?window=15s');
    expect(short.status).toBe(200);
    expect(Date.parse(short.body.data.window.until) - Date.parse(short.body.data.window.since)).toBe(15_000);
    const future = await get<Metrics>(tenant, `/metrics?since=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`);
    expect(future.status).toBe(200);
    expect(future.body.data.totals.calls).toBe(0);
    expect(future.body.data.series).toEqual([]);
    const unreadable = await get(tenant, '/metrics?window=15x');
    expect(unreadable.body.error.details.fields[0]).toMatchObject({
      field: 'window',
      expected: expect.stringContaining('followed by s, m, h or d'),
    });
    expect(unreadable.body.error.message).not.toContain('regex');
  });

  it('GET /metrics?format=prometheus counts every call since the first, as the trace has them', async () => {
    const response = await send(
      new Request('http://edge-tools.test/metrics?format=prometheus', { headers: { authorization: `Bearer ${tenant.apiKey}` } }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const exposition = await response.text();
    const series = (name: string, labels: string) => {
      const line = exposition.split('\n').find((l) => l.startsWith(`${name}{project="${tenant.projectId}",${labels}} `));
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
    };
    expect(series('edge_tools_tool_calls_total', 'tool="echo",outcome="success"')).toBe(4);
    expect(series('edge_tools_tool_calls_total', 'tool="find-nothing",outcome="failure",code="NOT_FOUND"')).toBe(2);
    expect(series('edge_tools_tool_calls_total', 'tool="throws",outcome="failure",code="UNKNOWN_ERROR"')).toBe(1);
    expect(series('edge_tools_tool_calls_total', 'tool="echo",outcome="refused",code="VALIDATION_ERROR"')).toBe(2);
    expect(series('edge_tools_tool_calls_total', 'tool="find-nothing",outcome="refused",code="VALIDATION_ERROR"')).toBe(1);
    expect(series('edge_tools_tool_retries_total', 'tool="flaky"')).toBe(1);
    expect(series('edge_tools_tool_slow_calls_total', 'tool="slow"')).toBe(1);
    // The histograms hold the durations the trace holds.
    const rows = await db
      .select({ tool: toolExecutions.tool, durationMs: toolExecutions.durationMs })
      .from(toolExecutions)
      .where(eq(toolExecutions.projectId, tenant.projectId));
    for (const tool of ['echo', 'find-nothing', 'slow']) {
      const durations = rows.filter((row) => row.tool === tool).map((row) => row.durationMs / 1000);
      expect(series('edge_tools_tool_duration_seconds_count', `tool="${tool}"`)).toBe(durations.length);
      expect(series('edge_tools_tool_duration_seconds_sum', `tool="${tool}"`)).toBeCloseTo(
        durations.reduce((a, b) => a + b, 0),
        3,
      );
      expect(series('edge_tools_tool_duration_seconds_bucket', `tool="${tool}",le="0.2"`)).toBe(durations.filter((d) => d <= 0.2).length);
    }
    // Another project's calls are not in this project's scrape.
    expect(exposition).not.toContain(other.projectId);
  });

  it('refuses a window with format=prometheus: Prometheus takes the window from the counters', async () => {
    const { status, body } = await get(tenant, '/metrics?format=prometheus&window=1h');
    expect(status).toBe(400);
    expect(body.error.details.fields[0].field).toBe('window');
  });

  it('METRICS_TOKEN scrapes every project in one scrape, labelled by project, and nothing else', async () => {
    const token = `metrics-${crypto.randomUUID()}`;
    const scrape = (authorization: string, query = 'format=prometheus') =>
      send(new Request(`http://edge-tools.test/metrics?${query}`, { headers: { authorization } }), { ...env, METRICS_TOKEN: token });
    const response = await scrape(`Bearer ${token}`);
    expect(response.status).toBe(200);
    const exposition = await response.text();
    expect(exposition).toContain(`edge_tools_tool_calls_total{project="${tenant.projectId}",tool="echo",outcome="success"} 4\n`);
    expect(exposition).toContain(`edge_tools_tool_calls_total{project="${other.projectId}",tool="echo",outcome="success"} 1\n`);
    expect((await scrape(`Bearer ${token}x`)).status).toBe(401);
    const json = await scrape(`Bearer ${token}`, 'window=1h');
    expect(json.status).toBe(400);
    expect(((await json.json()) as { error: { message: string } }).error.message).toContain('format=prometheus');
  });
});

describe('counters outlive the trace', () => {
  it('retention deletes old executions and refusals, and the counters of their calls stay', async () => {
    const tenant = await createTenant('Counted');
    for (let i = 0; i < 3; i++) expect((await call(tenant, 'echo', { text: `${i}` })).status).toBe(200);
    expect((await call(tenant, 'echo', { text: 1 })).status).toBe(400);
    const scrape = async () => {
      const response = await send(
        new Request('http://edge-tools.test/metrics?format=prometheus&tool=echo', {
          headers: { authorization: `Bearer ${tenant.apiKey}` },
        }),
      );
      return (await response.text()).split('\n').filter((line) => !line.startsWith('#') && !line.endsWith(' 0'));
    };
    const before = await scrape();
    expect(before).toContain(`edge_tools_tool_calls_total{project="${tenant.projectId}",tool="echo",outcome="success"} 3`);
    expect(before).toContain(
      `edge_tools_tool_calls_total{project="${tenant.projectId}",tool="echo",outcome="refused",code="VALIDATION_ERROR"} 1`,
    );
    // Made 400 days old, the rows are the only ones retention deletes 300 days ago.
    const longAgo = new Date(Date.now() - 400 * 86_400_000);
    await db.update(toolExecutions).set({ createdAt: longAgo }).where(eq(toolExecutions.projectId, tenant.projectId));
    await db.update(toolRefusals).set({ createdAt: longAgo }).where(eq(toolRefusals.projectId, tenant.projectId));
    const deleted = await deleteExpired(db, { days: 30, now: new Date(Date.now() - 300 * 86_400_000) });
    expect(deleted.executions).toBeGreaterThanOrEqual(3);
    expect((await get<ExecutionsPage>(tenant, '/executions')).body.data.executions).toEqual([]);
    expect(await scrape()).toEqual(before);
  });
});

describe.skipIf(!hasRedis)('rate-limit refusals in the metrics', () => {
  it('counts calls refused by the rate limit, which are not executions', async () => {
    const tenant = await createTenant('Rate limited');
    const callEnv: Env = { ...env, RATE_LIMIT_PER_MINUTE: '2', CONCURRENCY_NAMESPACE: `metrics-${crypto.randomUUID()}` };
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await call(tenant, 'echo', { text: `${i}` }, { callEnv })).status);
    expect(statuses.filter((s) => s === 429)).toHaveLength(3);
    const { body } = await get<Metrics>(tenant, '/metrics');
    expect(body.data.totals).toMatchObject({ calls: 2, rate_limit_refusals: 3, validation_refusals: 0 });
  });
});

describe('OpenTelemetry export', () => {
  type Received = { path: string; headers: Record<string, string>; body?: any; refused?: string };
  const received = async () => (await (await fetch(`${services.otlpUrl}/__received`)).json()) as Received[];
  /**
   * The spans the receiver got for one call (by edge_tools.trace_id, its meta.trace_id), with the
   * export they came in, as decoded with the official OTLP definitions.
   */
  async function spansOf(traceId: string) {
    const found: { span: any; resource: any; exported: Received }[] = [];
    const exports = await received();
    // Every export the worker ever sent decoded: none was refused by the official definitions.
    expect(exports.filter((exported) => exported.refused)).toEqual([]);
    for (const exported of exports) {
      for (const resourceSpans of exported.body!.resourceSpans) {
        for (const scopeSpans of resourceSpans.scopeSpans) {
          for (const span of scopeSpans.spans) {
            const attributes = attributesOf(span);
            if (attributes[ATTR_EDGE_TOOLS_TRACE_ID] === traceId)
              found.push({ span: { ...span, attributes }, resource: resourceSpans.resource, exported });
          }
        }
      }
    }
    return found;
  }
  async function onlySpanOf(traceId: string) {
    const found = await spansOf(traceId);
    expect(found).toHaveLength(1);
    return found[0]!;
  }
  const attributesOf = (node: { attributes: { key: string; value: Record<string, unknown> }[] }) =>
    Object.fromEntries(node.attributes.map(({ key, value }) => [key, Object.values(value)[0]]));
  /** A numeric attribute's value, whichever of OTLP's integer or double it was sent as. */
  const numeric = (value: Record<string, unknown>) => Number(value.intValue ?? value.doubleValue);

  let tenant: Tenant;
  const exportingEnv = (overrides: Partial<Env> = {}): Env => ({
    ...env,
    OTEL_EXPORTER_OTLP_ENDPOINT: services.otlpUrl,
    OTEL_EXPORTER_OTLP_HEADERS: 'x-receiver-token=s3cret%20value, x-team = tools',
    OTEL_SERVICE_NAME: 'edge-tools-test',
    ...overrides,
  });
  beforeAll(async () => {
    tenant = await createTenant('Exported');
  });
  afterEach(() => vi.restoreAllMocks());

  it("exports a successful execution as execute_tool {tool}, a child of the caller's traceparent", async () => {
    const { body } = await call(
      tenant,
      'flaky',
      { text: 'x' },
      { callEnv: exportingEnv(), headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, 'tool-call-id': 'call_flaky_1' } },
    );
    const [found, ...more] = await spansOf(body.meta.trace_id);
    expect(more).toEqual([]);
    expect(found!.exported.path).toBe('/v1/traces');
    // Binary protobuf unless told otherwise: what every OTLP/HTTP receiver accepts.
    expect(found!.exported.headers).toMatchObject({
      'x-receiver-token': 's3cret value',
      'x-team': 'tools',
      'content-type': 'application/x-protobuf',
    });
    expect(attributesOf(found!.resource)).toMatchObject({ [ATTR_SERVICE_NAME]: 'edge-tools-test' });
    const { span } = found!;
    expect(span).toMatchObject({
      name: 'execute_tool flaky',
      kind: SPAN_KIND_INTERNAL,
      traceId: CALLER_TRACE,
      parentSpanId: CALLER_SPAN,
      spanId: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    // Sampled, and its parent is the caller's, across the network.
    expect(span.flags).toBe(TRACE_FLAG_SAMPLED | SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE | SPAN_FLAGS_CONTEXT_IS_REMOTE);
    expect(span.attributes).toMatchObject({
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
      [ATTR_GEN_AI_TOOL_NAME]: 'flaky',
      [ATTR_GEN_AI_TOOL_CALL_ID]: 'call_flaky_1',
      [ATTR_GEN_AI_TOOL_TYPE]: 'function',
      [ATTR_GEN_AI_TOOL_DESCRIPTION]: flaky.description,
      [ATTR_EDGE_TOOLS_TRACE_ID]: body.meta.trace_id,
      'edge_tools.project.id': tenant.projectId,
      'edge_tools.attempts': '2',
      'edge_tools.performance_warning': false,
    });
    expect(span.attributes).not.toHaveProperty(ATTR_ERROR_TYPE);
    expect(span.status).toEqual({ code: STATUS_CODE_UNSET });
    // The queue wait, then the retried attempt, as events inside the span.
    expect(span.events.map((event: { name: string }) => event.name)).toEqual(['edge_tools.queue_wait', 'edge_tools.retry']);
    const [queueWait, retry] = span.events;
    expect(numeric(queueWait.attributes[0].value)).toBe(body.meta.queued_ms);
    expect(retry.attributes).toEqual([
      { key: 'edge_tools.attempt', value: { intValue: '1' } },
      { key: ATTR_ERROR_TYPE, value: { stringValue: 'DATABASE_ERROR' } },
    ]);
    for (const event of span.events) {
      expect(BigInt(event.timeUnixNano)).toBeGreaterThanOrEqual(BigInt(span.startTimeUnixNano));
      expect(BigInt(event.timeUnixNano)).toBeLessThanOrEqual(BigInt(span.endTimeUnixNano));
    }
    // Content capture is off unless configured: no arguments, no result.
    expect(span.attributes).not.toHaveProperty(ATTR_GEN_AI_TOOL_CALL_ARGUMENTS);
    expect(span.attributes).not.toHaveProperty(ATTR_GEN_AI_TOOL_CALL_RESULT);
    expect(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)).toBeGreaterThanOrEqual(0n);
    // The span id is the one stored with the execution.
    const [row] = await db
      .select({ spanId: toolExecutions.otelSpanId })
      .from(toolExecutions)
      .where(eq(toolExecutions.id, body.meta.trace_id));
    expect(row!.spanId).toBe(span.spanId);
  });

  it("exports a failure with error.type and an error status; without traceparent the trace is the execution's own", async () => {
    const { body } = await call(tenant, 'find-nothing', { text: 'gone' }, { callEnv: exportingEnv() });
    const { span } = await onlySpanOf(body.meta.trace_id);
    expect(span.traceId).toBe(body.meta.trace_id.replace(/-/g, ''));
    expect(span).not.toHaveProperty('parentSpanId');
    expect(span.flags).toBe(TRACE_FLAG_SAMPLED | SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE);
    expect(span.attributes[ATTR_ERROR_TYPE]).toBe('NOT_FOUND');
    expect(span.status).toEqual({ code: STATUS_CODE_ERROR, message: body.error.message });
  });

  it('exports a refused call too, with error.type and the arguments it was refused for, when content capture is on', async () => {
    const capturing = exportingEnv({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' });
    const refused = await call(
      tenant,
      'echo',
      { text: 42 },
      { callEnv: capturing, headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` } },
    );
    expect(refused.status).toBe(400);
    const { span } = await onlySpanOf(refused.body.meta.trace_id);
    expect(span).toMatchObject({
      name: 'execute_tool echo',
      traceId: CALLER_TRACE,
      parentSpanId: CALLER_SPAN,
      status: { code: STATUS_CODE_ERROR },
    });
    expect(span.attributes).toMatchObject({
      [ATTR_ERROR_TYPE]: 'VALIDATION_ERROR',
      'edge_tools.refused': true,
      'edge_tools.attempts': '0',
    });
    expect(span.events ?? []).toEqual([]);
    expect(JSON.parse(span.attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS])).toEqual({ text: 42 });
    expect(JSON.parse(span.attributes[ATTR_GEN_AI_TOOL_CALL_RESULT])).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [expect.objectContaining({ field: 'text' })] },
    });

    const succeeded = await call(tenant, 'echo', { text: 'shown' }, { callEnv: capturing });
    const { span: shown } = await onlySpanOf(succeeded.body.meta.trace_id);
    expect(JSON.parse(shown.attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS])).toEqual({ text: 'shown' });
    expect(JSON.parse(shown.attributes[ATTR_GEN_AI_TOOL_CALL_RESULT])).toEqual({ text: 'shown' });
  });

  it("takes the traceparent and the model's call id of an MCP call from params._meta", async () => {
    const parentSpan = 'b7ad6b7169203331';
    const response = await send(
      new Request('http://edge-tools.test/mcp', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tenant.apiKey}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: 'echo',
            arguments: { text: 'over mcp' },
            _meta: { traceparent: `00-${CALLER_TRACE}-${parentSpan}-01`, 'edge-tools/tool-call-id': 'toolu_01Mcp' },
          },
        }),
      }),
      exportingEnv(),
    );
    const message = (await response.json()) as { result: { structuredContent: { meta: { trace_id: string } } } };
    const traceId = message.result.structuredContent.meta.trace_id;
    const { span } = await onlySpanOf(traceId);
    expect(span).toMatchObject({ name: 'execute_tool echo', traceId: CALLER_TRACE, parentSpanId: parentSpan });
    expect(span.attributes[ATTR_GEN_AI_TOOL_CALL_ID]).toBe('toolu_01Mcp');
  });

  it('sends the OTLP JSON encoding instead when OTEL_EXPORTER_OTLP_PROTOCOL is http/json', async () => {
    const { body } = await call(
      tenant,
      'echo',
      { text: 'as json' },
      { callEnv: exportingEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), headers: { 'tool-call-id': 'call_json_1' } },
    );
    const { span, exported } = await onlySpanOf(body.meta.trace_id);
    expect(exported.headers['content-type']).toBe('application/json');
    expect(span).toMatchObject({
      name: 'execute_tool echo',
      kind: SPAN_KIND_INTERNAL,
      traceId: body.meta.trace_id.replace(/-/g, ''),
      status: { code: STATUS_CODE_UNSET },
    });
    expect(span.attributes).toMatchObject({
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
      [ATTR_GEN_AI_TOOL_NAME]: 'echo',
      [ATTR_GEN_AI_TOOL_CALL_ID]: 'call_json_1',
    });
  });

  it('ignores a malformed traceparent and does not export spans the caller does not sample', async () => {
    const malformed = await call(
      tenant,
      'echo',
      { text: 'x' },
      { callEnv: exportingEnv(), headers: { traceparent: `00-${'0'.repeat(32)}-${CALLER_SPAN}-01` } },
    );
    const { span } = await onlySpanOf(malformed.body.meta.trace_id);
    expect(span.traceId).toBe(malformed.body.meta.trace_id.replace(/-/g, ''));

    const unsampled = await call(
      tenant,
      'echo',
      { text: 'x' },
      { callEnv: exportingEnv(), headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-00` } },
    );
    expect(unsampled.status).toBe(200);
    expect(await spansOf(unsampled.body.meta.trace_id)).toEqual([]);
    // Still traced in the database, as a child of the caller.
    const [row] = await db
      .select({ parent: toolExecutions.otelParentSpanId })
      .from(toolExecutions)
      .where(eq(toolExecutions.id, unsampled.body.meta.trace_id));
    expect(row!.parent).toBe(CALLER_SPAN);
  });

  it('never lets an exporter failure touch the call: an error answer or an unreachable receiver', async () => {
    const warnings: string[] = [];
    vi.spyOn(console, 'warn').mockImplementation((line: string) => void warnings.push(line));
    const failing = await call(
      tenant,
      'echo',
      { text: 'x' },
      { callEnv: exportingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: `${services.otlpUrl}/failing` }) },
    );
    expect(failing).toMatchObject({ status: 200, body: { success: true } });
    expect((await spansOf(failing.body.meta.trace_id))[0]!.exported.path).toBe('/failing/v1/traces');

    const unreachable = await call(
      tenant,
      'echo',
      { text: 'y' },
      { callEnv: exportingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }) },
    );
    expect(unreachable).toMatchObject({ status: 200, body: { success: true } });

    const events = warnings.map((line) => JSON.parse(line)).filter((entry) => entry.event === 'otlp_export_failed');
    expect(events.map((entry) => entry.trace_id)).toEqual([failing.body.meta.trace_id, unreachable.body.meta.trace_id]);
    expect(events[0]).toMatchObject({ status: 503 });
    // Both executions are traced all the same.
    const rows = await db
      .select({ id: toolExecutions.id })
      .from(toolExecutions)
      .where(inArray(toolExecutions.id, [failing.body.meta.trace_id, unreachable.body.meta.trace_id]));
    expect(rows).toHaveLength(2);
  });
});

describe('retention (Cron Trigger)', () => {
  const DAY = 86_400_000;
  async function seed(tenant: Tenant, ageDays: number, count: number) {
    const createdAt = new Date(Date.now() - ageDays * DAY);
    const rows = Array.from({ length: count }, () => ({
      id: crypto.randomUUID(),
      projectId: tenant.projectId,
      tool: 'echo',
      status: 'success' as const,
      durationMs: 1,
      attempts: 1,
      queuedMs: 0,
      performanceWarning: false,
      createdAt,
    }));
    await db.insert(toolExecutions).values(rows);
    await db
      .insert(toolRefusals)
      .values(
        rows.map(() => ({ id: crypto.randomUUID(), projectId: tenant.projectId, tool: 'echo', code: 'VALIDATION_ERROR', createdAt })),
      );
    return rows.map((row) => row.id);
  }
  const remaining = async (table: typeof toolExecutions | typeof toolRefusals, projectId: string) =>
    (
      (await db
        .select({ count: sql<number>`count(*)::int` })
        .from(table)
        .where(eq(table.projectId, projectId))) as [{ count: number }]
    )[0].count;

  it('the scheduled handler deletes executions and refusals older than TRACE_RETENTION_DAYS, and nothing newer', async () => {
    const tenant = await createTenant('Retained');
    const old = await seed(tenant, 45, 3);
    const kept = await seed(tenant, 10, 2);
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ cron: '17 * * * *' }), { ...env, TRACE_RETENTION_DAYS: '30' }, ctx);
    await waitOnExecutionContext(ctx);
    const left = await db.select({ id: toolExecutions.id }).from(toolExecutions).where(eq(toolExecutions.projectId, tenant.projectId));
    expect(left.map((row) => row.id).sort()).toEqual([...kept].sort());
    expect(old.every((id) => !left.some((row) => row.id === id))).toBe(true);
    expect(await remaining(toolRefusals, tenant.projectId)).toBe(2);

    // A shorter period takes the rest.
    const ctx2 = createExecutionContext();
    await worker.scheduled(createScheduledController(), { ...env, TRACE_RETENTION_DAYS: '7' }, ctx2);
    await waitOnExecutionContext(ctx2);
    expect(await remaining(toolExecutions, tenant.projectId)).toBe(0);
  });

  it('the same run purges expired idempotency records, and keeps live ones', async () => {
    const tenant = await createTenant('Keyed');
    const record = (key: string, expiresAt: Date) => ({
      projectId: tenant.projectId,
      tool: 'log-mood',
      key,
      fingerprint: 'f',
      status: 'completed' as const,
      traceId: crypto.randomUUID(),
      expiresAt,
    });
    await db.insert(idempotencyKeys).values([record('expired', new Date(Date.now() - 60_000)), record('live', new Date(Date.now() + DAY))]);
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController(), env, ctx);
    await waitOnExecutionContext(ctx);
    const left = await db.select({ key: idempotencyKeys.key }).from(idempotencyKeys).where(eq(idempotencyKeys.projectId, tenant.projectId));
    expect(left.map((row) => row.key)).toEqual(['live']);
  });

  it('deletes in bounded batches: a run stops at its limit, the next one finishes', async () => {
    const tenant = await createTenant('Batched');
    await seed(tenant, 400, 5);
    const now = new Date(Date.now() - 300 * DAY); // only this file's 400-day-old rows are older than 30 days before then
    const first = await deleteExpired(db, { days: 30, batchSize: 2, maxBatches: 2, now });
    expect(first).toMatchObject({ executions: 4, refusals: 4, complete: false });
    expect(await remaining(toolExecutions, tenant.projectId)).toBe(1);
    const second = await deleteExpired(db, { days: 30, batchSize: 2, maxBatches: 2, now });
    expect(second).toMatchObject({ executions: 1, refusals: 1, complete: true });
    expect(await remaining(toolExecutions, tenant.projectId)).toBe(0);
  });

  it('a bad TRACE_RETENTION_DAYS deletes nothing and says why', async () => {
    const tenant = await createTenant('Misconfigured');
    await seed(tenant, 90, 1);
    const errors: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void errors.push(line));
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController(), { ...env, TRACE_RETENTION_DAYS: 'forever' }, ctx);
    await waitOnExecutionContext(ctx);
    vi.restoreAllMocks();
    expect(await remaining(toolExecutions, tenant.projectId)).toBe(1);
    expect(errors.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({ event: 'retention_skipped', reason: expect.stringContaining('TRACE_RETENTION_DAYS') }),
    );
  });
});

describe('GET /dashboard', () => {
  it('serves the page without a key, with no data in it and a CSP that allows nothing from elsewhere', async () => {
    const response = await send(new Request('http://edge-tools.test/dashboard'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1]!;
    const page = await response.text();
    expect(page).toContain(`<script nonce="${nonce}">`);
    expect(page).toContain('sessionStorage');
    expect(page).not.toMatch(/<script[^>]+src=|<link[^>]+href=|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
  });
});
