import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { ok } from '../../shared/core/contract.ts';
import { defineTool } from '../../shared/core/tool.ts';
import { dueDateField, itemStatus, itemTitleField, notesField, planIdField, planTitleField } from './lib/fields.ts';
import { findPlan } from './lib/lookup.ts';
import { reserveIds } from './lib/sql.ts';
import { linkList } from '../../shared/core/links.ts';

const addedItem = z.object({
  item_id: z.int(),
  plan_id: z.int(),
  plan_title: z.string(),
  title: z.string(),
  status: itemStatus,
  due_date: z.string().nullable(),
  notes: z.string().nullable(),
});

/** Appends one item to a plan. */
export default defineTool({
  id: 'add-plan-item',
  toolset: 'study',
  title: 'Add a plan item',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  description: 'Add a pending item at the end of a plan named by plan_id and/or plan_title, else the newest.',
  get input() {
    return z.strictObject({
      plan_id: planIdField.optional(),
      plan_title: planTitleField.optional(),
      title: itemTitleField,
      due_date: dueDateField.optional(),
      notes: notesField.optional(),
    });
  },
  get output() {
    return addedItem;
  },
  example: { plan_id: 'latest', title: 'Practise past papers', due_date: '2026-05-01' },
  async execute({ plan_id, plan_title, title, due_date, notes }, { db, project, idFor, links }) {
    const plan = await findPlan(db, project.id, { plan_id, plan_title });
    if ('ok' in plan) return plan;
    const requestId = await idFor('item');
    const [, added] = await db.batch([
      db.execute(sql`
        with ids as (${reserveIds(project.id, 'plan_item')})
        insert into study_plan_items (project_id, id, plan_id, position, title, due_date, notes, request_id)
        select ${project.id}::uuid, ids.last_id, ${plan.plan_id}::int,
               (select coalesce(max(position) + 1, 0) from study_plan_items where project_id = ${project.id} and plan_id = ${plan.plan_id}),
               ${title}::text, ${due_date ?? null}::date, ${notes ?? null}::text, ${requestId}::uuid
        from ids
        on conflict (project_id, request_id) do nothing`),
      // Read back by the call's id: a retried attempt answers with the item its first attempt added.
      db.execute(sql`
        select i.id as item_id, i.plan_id, p.title as plan_title, i.title, i.status, i.due_date::text as due_date, i.notes
        from study_plan_items i join study_plans p on p.project_id = i.project_id and p.id = i.plan_id
        where i.project_id = ${project.id} and i.request_id = ${requestId}`),
    ]);
    const item = added.rows[0] as z.output<typeof addedItem>;
    return ok(item, `Added item ${item.item_id} "${item.title}" to plan ${item.plan_id} "${item.plan_title}".`, {
      links: linkList([links.record('plan_item', item.item_id, item.title), links.record('plan', item.plan_id, item.plan_title)]),
    });
  },
});
