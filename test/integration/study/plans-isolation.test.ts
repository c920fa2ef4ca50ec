/**
 * The plan tools keep projects apart, in workerd through the gateway: another project's plans and
 * items are never shown, and its ids and titles answer exactly as unknown ones, changing none of
 * its rows.
 */
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '../helpers.ts';
import { data, failure, newTenant, type Data, type Tenant } from './helpers.ts';

describe('tenant isolation', () => {
  let owner: Tenant;
  let other: Tenant;
  const ownerState = async () =>
    (
      await db.execute(sql`select p.id, p.title, p.status, (select json_agg(json_build_object('id', i.id, 'title', i.title, 'status', i.status) order by i.id)
        from study_plan_items i where i.project_id = p.project_id and i.plan_id = p.id) as items
        from study_plans p where p.project_id = ${owner.projectId} order by p.id`)
    ).rows;

  beforeAll(async () => {
    owner = await newTenant('Plans: owner');
    other = await newTenant('Plans: other');
    await data(owner, 'write-plan', { title: 'Owner plan one', items: ['Owner item'] });
    await data(owner, 'write-plan', { title: 'Owner plan two', items: ['Another owner item'] });
    await data(owner, 'write-plan', { title: 'Owner secret plan', items: ['Secret item'] }); // plan 3: no plan 3 in the other project
    await data(other, 'write-plan', { title: 'Other plan', items: ['Other item'] }); // the other project's plan 1
  });

  it("never shows another project's plans or items", async () => {
    const listed = await data(other, 'list-plans', {});
    expect(listed.plans.map((p: Data) => p.title)).toEqual(['Other plan']);
    const items = await data(other, 'list-plan-items', {});
    expect(items.plan_items.flatMap((p: Data) => p.items.map((i: Data) => i.title))).toEqual(['Other item']);
    expect((await data(other, 'list-plan-items', { plan_id: 'latest' })).plan_items[0].title).toBe('Other plan');
  });

  it("answers another project's ids and titles exactly as unknown ones, and changes none of its rows", async () => {
    const before = await ownerState();
    expect(before).toHaveLength(3);
    const theirs = await failure(other, 'list-plan-items', { plan_id: 3 }, 404, 'NOT_FOUND');
    const unknown = await failure(other, 'list-plan-items', { plan_id: 4 }, 404, 'NOT_FOUND');
    expect(theirs.message.replace('3', 'N')).toBe(unknown.message.replace('4', 'N'));
    await failure(other, 'update-plan-status', { plan_id: 3, status: 'archived' }, 404, 'NOT_FOUND');
    await failure(other, 'update-plan-status', { plan_title: 'Owner secret plan', status: 'archived' }, 404, 'NOT_FOUND');
    await failure(other, 'add-plan-item', { plan_id: 3, title: 'Injected' }, 404, 'NOT_FOUND');
    await failure(other, 'update-item-status', { item_id: 'Secret item', status: 'skipped' }, 404, 'NOT_FOUND');
    await failure(other, 'update-item-status', { item_id: 3, status: 'skipped' }, 404, 'NOT_FOUND');
    // Ids shared by both projects name each project's own record.
    expect(await data(other, 'update-plan-status', { plan_id: 1, status: 'archived' })).toMatchObject({ title: 'Other plan' });
    expect(await data(other, 'update-item-status', { item_id: 1, status: 'completed' })).toMatchObject({ title: 'Other item' });
    expect(await ownerState()).toEqual(before);
  });
});
