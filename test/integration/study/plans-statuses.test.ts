/**
 * Plan and item statuses in workerd, through the gateway as an agent calls them: an item found by
 * id or title (within a plan or across plans, ambiguous, missing), a status it already has, and a
 * plan's status set by "latest", title or id.
 */
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '../helpers.ts';
import { call, data, failure, newTenant, rowCount, type Tenant } from './helpers.ts';

describe('statuses', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await newTenant('Plans: statuses');
    await data(tenant, 'write-plan', { title: 'Marathon', items: ['Long run', 'Intervals'] }); // items 1, 2
    await data(tenant, 'write-plan', { title: 'Half marathon', items: ['Long run', 'Tempo run'] }); // items 3, 4
  });

  it('sets an item status by id, and says so', async () => {
    const { body } = await call(tenant, 'update-item-status', { item_id: 2, status: 'in_progress' });
    expect(body).toMatchObject({
      success: true,
      data: { item_id: 2, plan_id: 1, title: 'Intervals', status: 'in_progress', previous_status: 'pending', changed: true },
    });
    expect(body.message).toBe('Marked item 2 "Intervals" in_progress (it was pending).');
    const { rows } = await db.execute(sql`select status from study_plan_items where project_id = ${tenant.projectId} and id = 2`);
    expect(rows).toEqual([{ status: 'in_progress' }]);
  });

  it('answers a status the item already has as a success that changed nothing', async () => {
    const { status, body } = await call(tenant, 'update-item-status', { item_id: 2, status: 'in_progress' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, data: { changed: false, previous_status: 'in_progress' } });
    expect(body.message).toContain('is already in_progress; nothing changed');
  });

  it('answers an item title found in several plans with CONFLICT, and finds it within one plan', async () => {
    const error = await failure(tenant, 'update-item-status', { item_title: 'long run', status: 'completed' }, 409, 'CONFLICT');
    expect(error.message).toContain('match item_title "long run"');
    expect(error.details).toMatchObject({
      entity_type: 'item',
      query: { item_title: 'long run' },
      candidates: [
        { item_id: 3, title: 'Long run', plan_id: 2, plan_title: 'Half marathon' },
        { item_id: 1, title: 'Long run', plan_id: 1, plan_title: 'Marathon' },
      ],
    });
    expect(await rowCount('study_plan_items', tenant.projectId, sql`status = 'completed'`)).toBe(0);
    const updated = await data(tenant, 'update-item-status', { item_title: 'long run', plan_title: 'Marathon', status: 'completed' });
    expect(updated).toMatchObject({ item_id: 1, plan_id: 1, status: 'completed' });
    const latest = await data(tenant, 'update-item-status', { item_id: 'Long run', plan_id: 'latest', status: 'skipped' });
    expect(latest).toMatchObject({ item_id: 3, plan_id: 2, status: 'skipped' });
  });

  it('answers an item not in the named plan with NOT_FOUND naming both', async () => {
    const error = await failure(
      tenant,
      'update-item-status',
      { item_title: 'Tempo run', plan_id: 1, status: 'completed' },
      404,
      'NOT_FOUND',
    );
    expect(error.details).toEqual({ entity_type: 'item', query: { item_title: 'Tempo run', plan_id: 1 } });
    const byId = await failure(tenant, 'update-item-status', { item_id: 4, plan_title: 'Marathon', status: 'completed' }, 404, 'NOT_FOUND');
    expect(byId.details).toEqual({ entity_type: 'item', query: { item_id: 4, plan_title: 'Marathon' } });
    expect(await rowCount('study_plan_items', tenant.projectId, sql`id = 4 and status = 'pending'`)).toBe(1);
  });

  it("takes the seed's item_title, item_id's title as well, and both together (an item matching both)", async () => {
    // Seed clients name an item by item_title; item_id takes a title too, and the answer's query names the field sent.
    const byTitle = await data(tenant, 'update-item-status', { item_title: 'Intervals', plan_id: 1, status: 'completed' });
    expect(byTitle).toMatchObject({ item_id: 2, status: 'completed' });
    const error = await failure(tenant, 'update-item-status', { item_id: 'long run', status: 'completed' }, 409, 'CONFLICT');
    expect(error.message).toContain('match item_id "long run"');
    expect(await data(tenant, 'update-item-status', { item_id: 2, item_title: 'intervals', status: 'pending' })).toMatchObject({
      item_id: 2,
      status: 'pending',
    });
    const mismatch = await failure(
      tenant,
      'update-item-status',
      { item_id: 2, item_title: 'Long run', status: 'completed' },
      404,
      'NOT_FOUND',
    );
    expect(mismatch.message).toContain('No item with id 2 is titled "Long run"');
    expect(mismatch.details).toEqual({ entity_type: 'item', query: { item_id: 2, item_title: 'Long run' } });
  });

  it('refuses an update that names no item, saying both fields it takes', async () => {
    for (const input of [{ status: 'completed' }, { item_id: null, item_title: null, status: 'completed' }]) {
      const error = await failure(tenant, 'update-item-status', input, 400, 'VALIDATION_ERROR');
      expect(error.message).toBe("Field 'item_id' must be given, or item_title instead, but received neither.");
      expect(error.details!.fields).toMatchObject([{ field: 'item_id', code: 'one_of_required' }]);
    }
    expect(await rowCount('study_plan_items', tenant.projectId, sql`status = 'completed'`)).toBe(1);
  });

  it('sets a plan status by "latest", title or id', async () => {
    expect(await data(tenant, 'update-plan-status', { plan_id: 'latest', status: 'paused' })).toEqual({
      plan_id: 2,
      title: 'Half marathon',
      status: 'paused',
      previous_status: 'active',
      changed: true,
    });
    expect(await data(tenant, 'update-plan-status', { plan_title: 'MARATHON', status: 'completed' })).toMatchObject({
      plan_id: 1,
      changed: true,
    });
    expect(await data(tenant, 'update-plan-status', { plan_id: 1, status: 'completed' })).toMatchObject({ changed: false });
    const { rows } = await db.execute(sql`select id, status from study_plans where project_id = ${tenant.projectId} order by id`);
    expect(rows).toEqual([
      { id: 1, status: 'completed' },
      { id: 2, status: 'paused' },
    ]);
  });
});
