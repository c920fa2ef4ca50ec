/**
 * Retention through the worker's Cron Trigger (its `scheduled` handler) in workerd: executions and
 * refusals older than TRACE_RETENTION_DAYS are deleted in bounded batches, nothing newer, and
 * expired idempotency records with them.
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from 'cloudflare:test';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { idempotencyKeys, toolExecutions, toolRefusals } from '../../drizzle/schema.ts';
import { deleteExpired } from '../../shared/observability/retention.ts';
import { createTenant, db } from './helpers.ts';
import { type Tenant, worker } from './observability-fixture.ts';

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
