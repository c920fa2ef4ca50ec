/**
 * Writing plans in workerd, through the gateway as an agent calls them: write-plan (items in order,
 * numbered from 1 in a new project; a title already used; its transaction, whole or nothing, with a
 * transient failure retried inside it) and add-plan-item (at the end of the plan named, or of the
 * newest). (Calls retried after a lost answer: retry-safety.test.ts.)
 */
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { tools } from '../../../functions/registry.ts';
import { createGateway } from '../../../shared/http/app.ts';
import { callTool, db } from '../helpers.ts';
import { call, data, failInserts, failure, newTenant, rowCount, type Data, type Tenant } from './helpers.ts';

const SPANISH = {
  title: 'Spanish B1 exam',
  items: [
    { title: 'Review the subjunctive', due_date: '2027-03-01', notes: 'Present first.' },
    'Learn 200 travel words',
    { title: 'Mock oral exam', due_date: null, notes: null },
  ],
};

describe('write-plan', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await newTenant('Plans: write');
  });

  it('creates the plan and its items in order, numbered from 1 in a new project', async () => {
    const created = await data(tenant, 'write-plan', SPANISH);
    expect(created).toEqual({ created_plan_id: 1, title: 'Spanish B1 exam', status: 'active', item_count: 3, item_ids: [1, 2, 3] });
    const { rows } = await db.execute(sql`select id, plan_id, position, title, status, due_date::text as due_date, notes
      from study_plan_items where project_id = ${tenant.projectId} order by position`);
    expect(rows).toEqual([
      {
        id: 1,
        plan_id: 1,
        position: 0,
        title: 'Review the subjunctive',
        status: 'pending',
        due_date: '2027-03-01',
        notes: 'Present first.',
      },
      { id: 2, plan_id: 1, position: 1, title: 'Learn 200 travel words', status: 'pending', due_date: null, notes: null },
      { id: 3, plan_id: 1, position: 2, title: 'Mock oral exam', status: 'pending', due_date: null, notes: null },
    ]);
  });

  it('says when another plan has the same title, and how to tell them apart', async () => {
    const { body } = await call(tenant, 'write-plan', { title: 'spanish b1 EXAM', items: ['Listen to podcasts'] });
    expect(body).toMatchObject({ success: true, data: { created_plan_id: 2 } });
    expect(body.message).toContain('1 other plan has the same title: refer to this one by plan_id 2');
  });

  it.each([
    ['no items', { title: 'Empty', items: [] }, [{ field: 'items', code: 'too_small' }]],
    [
      'more than 100 items',
      { title: 'Huge', items: Array.from({ length: 101 }, (_, i) => `Item ${i}`) },
      [{ field: 'items', code: 'too_big' }],
    ],
    ['no title', { items: ['One'] }, [{ field: 'title', code: 'required' }]],
    ['a blank item', { title: 'Blank', items: ['  '] }, [{ field: 'items[0]', code: 'blank' }]],
    ['an item that is neither a title nor an object', { title: 'Numbers', items: [5] }, [{ field: 'items[0]', code: 'invalid_union' }]],
    [
      'a malformed due date',
      { title: 'Dates', items: [{ title: 'One', due_date: '01/03/2027' }] },
      [{ field: 'items[0].due_date', code: 'invalid_format' }],
    ],
  ])('refuses %s, naming the field', async (_case, input, fields) => {
    const before = await rowCount('study_plans', tenant.projectId);
    const error = await failure(tenant, 'write-plan', input, 400, 'VALIDATION_ERROR');
    expect(error.details.fields).toMatchObject(fields);
    expect(await rowCount('study_plans', tenant.projectId)).toBe(before);
  });

  it('writes nothing when an item fails inside the transaction', async () => {
    const plans = await rowCount('study_plans', tenant.projectId);
    const items = await rowCount('study_plan_items', tenant.projectId);
    const restore = await failInserts('study_plan_items', `new.title = 'Breaks the transaction'`, 'P0001', 1_000);
    try {
      await failure(
        tenant,
        'write-plan',
        { title: 'Half written?', items: ['First item', 'Breaks the transaction', 'Third item'] },
        500,
        'DATABASE_ERROR',
      );
    } finally {
      await restore();
    }
    expect(await rowCount('study_plans', tenant.projectId)).toBe(plans);
    expect(await rowCount('study_plan_items', tenant.projectId)).toBe(items);
  });

  it('retries a transient failure inside the transaction and saves the plan once, whole', async () => {
    const restore = await failInserts('study_plan_items', `new.title = 'Fails once'`, '40001', 1);
    const gateway = createGateway(tools, { retryDelayMs: 10 });
    let answer;
    try {
      answer = await callTool<Data>(
        'write-plan',
        { title: 'Retried plan', items: ['Before', 'Fails once', 'After'] },
        { key: tenant.apiKey, worker: gateway },
      );
    } finally {
      await restore();
    }
    expect(answer.body).toMatchObject({ success: true, data: { item_count: 3 }, meta: { attempts: 2 } });
    expect(await rowCount('study_plans', tenant.projectId, sql`title = 'Retried plan'`)).toBe(1);
    const planId = (answer.body as Data).data.created_plan_id;
    expect(await rowCount('study_plan_items', tenant.projectId, sql`plan_id = ${planId}`)).toBe(3);
  });
});

describe('add-plan-item', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await newTenant('Plans: add');
    await data(tenant, 'write-plan', { title: 'Piano recital', items: ['Scales', 'Arpeggios'] });
  });

  it('appends an item at the end of the latest plan', async () => {
    const added = await data(tenant, 'add-plan-item', {
      plan_id: 'latest',
      title: 'Sight reading',
      due_date: '2027-06-01',
      notes: 'Ten minutes a day',
    });
    expect(added).toEqual({
      item_id: 3,
      plan_id: 1,
      plan_title: 'Piano recital',
      title: 'Sight reading',
      status: 'pending',
      due_date: '2027-06-01',
      notes: 'Ten minutes a day',
    });
    const listed = await data(tenant, 'list-plan-items', { plan_title: 'Piano recital' });
    expect(listed.plan_items[0].items.map((i: Data) => i.title)).toEqual(['Scales', 'Arpeggios', 'Sight reading']);
  });

  it("adds to the newest plan when the call names no plan, as plan_id's default says", async () => {
    await data(tenant, 'write-plan', { title: 'Violin exam', items: ['Bowing'] });
    const added = await data(tenant, 'add-plan-item', { title: 'Vibrato' });
    expect(added).toMatchObject({ plan_id: 2, plan_title: 'Violin exam', title: 'Vibrato' });
    expect(await rowCount('study_plan_items', tenant.projectId, sql`title = 'Vibrato' and plan_id = 2`)).toBe(1);
  });
});
