/**
 * The metrics through the real worker in workerd: `GET /metrics` (JSON and Prometheus) and
 * `GET /refusals` count the known calls of fresh tenants exactly; the counters outlive the trace
 * that retention deletes; rate-limit refusals are counted; and the dashboard page carries no data.
 */
import { env } from 'cloudflare:workers';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { toolExecutions, toolRefusals } from '../../drizzle/schema.ts';
import type { ExecutionsPage } from '../../shared/observability/executions.ts';
import type { Metrics } from '../../shared/observability/metrics.ts';
import { deleteExpired } from '../../shared/observability/retention.ts';
import type { Env } from '../../shared/runtime/env.ts';
import { createTenant, db } from './helpers.ts';
import { call, get, hasRedis, makeKnownCalls, send, type Tenant } from './observability-fixture.ts';

/** Linear interpolation between closest ranks: what Postgres' percentile_cont computes, written independently. */
function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = fraction * (sorted.length - 1);
  const low = Math.floor(rank);
  return sorted[low]! + (sorted[Math.ceil(rank)]! - sorted[low]!) * (rank - low);
}

describe('metrics of known calls', () => {
  let tenant: Tenant;
  let other: Tenant;
  const ids: Record<string, string[]> = {};

  beforeAll(async () => {
    ({ tenant, other } = await makeKnownCalls(ids));
  }, 60_000);

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
