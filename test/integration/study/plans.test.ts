/**
 * The study planner's plan tools in workerd, through the gateway as an agent calls them: plans
 * and items by id, "latest" and title, ambiguous and missing titles, statuses, pagination, the
 * write-plan transaction and tenant isolation. (Calls retried after a lost answer: retry-safety.test.ts.)
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
