/**
 * The executions API through the real worker in workerd: `GET /executions` and
 * `GET /executions/:trace_id` read back the known calls of fresh tenants (every count exact),
 * filtered and paged, each tenant seeing only its own, and every read route needs a key.
 */
import { and, eq, gte, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { toolExecutions } from '../../drizzle/schema.ts';
import { encodeCursor } from '../../shared/core/cursor.ts';
import type { ExecutionDetail, ExecutionsPage } from '../../shared/observability/executions.ts';
import type { Metrics } from '../../shared/observability/metrics.ts';
import { db } from './helpers.ts';
import { CALLER_SPAN, CALLER_TRACE, executedOf, get, makeKnownCalls, type Tenant } from './observability-fixture.ts';

describe('executions of known calls', () => {
  let tenant: Tenant;
  let other: Tenant;
  const ids: Record<string, string[]> = {};
  const executed = () => executedOf(ids);

  beforeAll(async () => {
    ({ tenant, other } = await makeKnownCalls(ids));
  }, 60_000);

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
});
