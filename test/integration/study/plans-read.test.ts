/**
 * Reading plans in workerd, through the gateway as an agent calls them: list-plans (newest first,
 * item counts by status, a status filter, pages with a cursor) and finding a plan by id, "latest"
 * or title (ambiguous and missing titles, both fields together) for list-plan-items.
 */
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, data, failure, newTenant, rowCount, type Data, type Tenant } from './helpers.ts';

describe('list-plans', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await newTenant('Plans: list');
    for (const title of ['Plan A', 'Plan B', 'Plan C', 'Plan D', 'Plan E'])
      await data(tenant, 'write-plan', { title, items: ['One', 'Two'] });
    await data(tenant, 'update-item-status', { plan_title: 'Plan E', item_id: 'One', status: 'completed' });
    await data(tenant, 'update-plan-status', { plan_title: 'Plan B', status: 'archived' });
  });

  it('lists plans newest first with their item counts by status', async () => {
    const listed = await data(tenant, 'list-plans', {});
    expect(listed.plans.map((p: Data) => p.title)).toEqual(['Plan E', 'Plan D', 'Plan C', 'Plan B', 'Plan A']);
    expect(listed.plans[0]).toMatchObject({
      plan_id: 5,
      status: 'active',
      item_counts: { total: 2, pending: 1, in_progress: 0, completed: 1, skipped: 0 },
    });
    expect(listed.plans[0].created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(listed.next_cursor).toBeNull();
  });

  it('filters by status', async () => {
    const listed = await data(tenant, 'list-plans', { status: 'archived' });
    expect(listed.plans.map((p: Data) => p.title)).toEqual(['Plan B']);
  });

  it('pages with a cursor until the last page, saying how to get the rest', async () => {
    const seen: string[] = [];
    let cursor: string | null | undefined;
    let pages = 0;
    do {
      const { body } = await call(tenant, 'list-plans', { limit: 2, cursor });
      if (!body.success) throw new Error(body.message);
      pages++;
      seen.push(...body.data.plans.map((p: Data) => p.title));
      cursor = body.data.next_cursor;
      expect(body.meta.truncated).toBe(cursor !== null);
      if (cursor) expect(body.message).toContain('call again with the same fields and cursor');
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(['Plan E', 'Plan D', 'Plan C', 'Plan B', 'Plan A']);
  });

  it('refuses a cursor it did not make', async () => {
    const error = await failure(tenant, 'list-plans', { cursor: 'bm90LWEtY3Vyc29y' }, 400, 'VALIDATION_ERROR');
    expect(error.details.fields).toMatchObject([{ field: 'cursor', code: 'invalid_cursor' }]);
  });

  it('says how to start when the project has no plans', async () => {
    const empty = await newTenant('Plans: none');
    const { body } = await call(empty, 'list-plans', {});
    expect(body).toMatchObject({ success: true, data: { plans: [], next_cursor: null } });
    expect(body.message).toContain('write-plan');
  });
});

describe('finding plans: id, "latest", title', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await newTenant('Plans: find');
    await data(tenant, 'write-plan', { title: 'Biology final', items: ['Cells', 'Genetics'] }); // plan 1
    await data(tenant, 'write-plan', { title: 'History essay', items: ['Outline'] }); // plan 2
    await data(tenant, 'write-plan', { title: 'HISTORY essay', items: ['Sources'] }); // plan 3
    await data(tenant, 'write-plan', { title: 'Chemistry lab', items: ['Titration', 'Report'] }); // plan 4, the latest
  });

  it('lists the items of a plan by id, in plan order', async () => {
    const listed = await data(tenant, 'list-plan-items', { plan_id: 1 });
    expect(listed.plan_items).toEqual([
      {
        plan_id: 1,
        title: 'Biology final',
        status: 'active',
        items: [
          { item_id: 1, title: 'Cells', status: 'pending', due_date: null, notes: null },
          { item_id: 2, title: 'Genetics', status: 'pending', due_date: null, notes: null },
        ],
      },
    ]);
  });

  it('takes "latest" as the most recently created plan', async () => {
    const listed = await data(tenant, 'list-plan-items', { plan_id: 'latest' });
    expect(listed.plan_items.map((p: Data) => p.title)).toEqual(['Chemistry lab']);
  });

  it('matches titles exactly, ignoring case', async () => {
    const listed = await data(tenant, 'list-plan-items', { plan_title: 'biology FINAL' });
    expect(listed.plan_items[0]).toMatchObject({ plan_id: 1, title: 'Biology final' });
    await failure(tenant, 'list-plan-items', { plan_title: 'Biology' }, 404, 'NOT_FOUND');
  });

  it('answers a title shared by several plans with CONFLICT listing the candidates', async () => {
    const error = await failure(tenant, 'list-plan-items', { plan_title: 'history essay' }, 409, 'CONFLICT');
    expect(error.details).toMatchObject({
      entity_type: 'plan',
      query: { plan_title: 'history essay' },
      candidates: [
        { plan_id: 3, title: 'HISTORY essay' },
        { plan_id: 2, title: 'History essay' },
      ],
    });
    expect(error.message).toMatch(/Ask the user which one they mean, then call again with plan_id/);
    expect(error.hint).toContain('plan_id set to one of: 3, 2');
    // Each tool that finds plans by title answers the same way.
    for (const [toolId, input] of [
      ['add-plan-item', { plan_title: 'History essay', title: 'Draft' }],
      ['update-plan-status', { plan_title: 'History essay', status: 'paused' }],
      ['update-item-status', { plan_title: 'History essay', item_id: 'Outline', status: 'completed' }],
    ] as const) {
      const again = await failure(tenant, toolId, input, 409, 'CONFLICT');
      expect(again.details.candidates.map((c: Data) => c.plan_id)).toEqual([3, 2]);
    }
    expect(await rowCount('study_plan_items', tenant.projectId, sql`title = 'Draft'`)).toBe(0);
  });

  it.each([
    ['an unknown id', { plan_id: 99 }, { plan_id: 99 }],
    ['an unknown title', { plan_title: 'Physics' }, { plan_title: 'Physics' }],
  ])('answers %s with NOT_FOUND naming what was looked for', async (_case, input, query) => {
    const error = await failure(tenant, 'list-plan-items', input, 404, 'NOT_FOUND');
    expect(error.details).toEqual({ entity_type: 'plan', query });
    expect(error.message).toContain('list-plans');
  });

  it('answers "latest" in a project without plans with NOT_FOUND', async () => {
    const empty = await newTenant('Plans: no latest');
    const error = await failure(empty, 'add-plan-item', { plan_id: 'latest', title: 'Anything' }, 404, 'NOT_FOUND');
    expect(error.details).toEqual({ entity_type: 'plan', query: { plan_id: 'latest' } });
    expect(error.message).toContain('write-plan');
  });

  it('takes plan_id and plan_title together as a plan matching both, and NOT_FOUND when none does', async () => {
    const both = await data(tenant, 'list-plan-items', { plan_id: 1, plan_title: 'biology final' });
    expect(both.plan_items.map((p: Data) => p.plan_id)).toEqual([1]);
    // "latest" with a title: the newest plan of that title, where the title alone is ambiguous.
    const newest = await data(tenant, 'list-plan-items', { plan_id: 'latest', plan_title: 'History essay' });
    expect(newest.plan_items.map((p: Data) => p.plan_id)).toEqual([3]);
    const error = await failure(
      tenant,
      'update-plan-status',
      { plan_id: 2, plan_title: 'Biology final', status: 'paused' },
      404,
      'NOT_FOUND',
    );
    expect(error.details).toEqual({ entity_type: 'plan', query: { plan_id: 2, plan_title: 'Biology final' } });
    expect(error.message).toContain('Plan 2 is not titled "Biology final"');
    expect(await rowCount('study_plans', tenant.projectId, sql`status = 'paused'`)).toBe(0);
  });

  it.each([
    ['a plan_id that is neither an id nor "latest"', 'list-plan-items', { plan_id: 'newest' }, 'plan_id'],
    ['a plan_id of 0', 'list-plan-items', { plan_id: 0 }, 'plan_id'],
    ['an unknown status', 'update-plan-status', { plan_id: 1, status: 'done' }, 'status'],
  ])('refuses %s, naming the field', async (_case, toolId, input, field) => {
    const error = await failure(tenant, toolId, input, 400, 'VALIDATION_ERROR');
    expect(error.details.fields.map((f: Data) => f.field)).toEqual([field]);
  });

  it('lists the items of every plan, grouped by plan, newest plan first, a page at a time', async () => {
    const first = await data(tenant, 'list-plan-items', { limit: 3 });
    expect(first.plan_items.map((p: Data) => [p.plan_id, p.items.map((i: Data) => i.title)])).toEqual([
      [4, ['Titration', 'Report']],
      [3, ['Sources']],
    ]);
    const second = await data(tenant, 'list-plan-items', { limit: 3, cursor: first.next_cursor });
    expect(second.plan_items.map((p: Data) => [p.plan_id, p.items.map((i: Data) => i.title)])).toEqual([
      [2, ['Outline']],
      [1, ['Cells', 'Genetics']],
    ]);
    expect(second.next_cursor).toBeNull();
  });
});
