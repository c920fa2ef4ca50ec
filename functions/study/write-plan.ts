import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { ok } from '../../shared/core/contract.ts';
import { defineTool } from '../../shared/core/tool.ts';
import { dueDateField, itemTitleField, notesField, planStatus, planTitleField } from './lib/fields.ts';
import { plural } from '../../shared/core/plural.ts';
import { reserveIds } from './lib/sql.ts';
import { linkList } from '../../shared/core/links.ts';

const MAX_ITEMS = 100;

// Optional fields nested in a list are nullish: callers that send every field send null for them.
const item = z.union(
  [
    itemTitleField,
    z.strictObject({
      title: itemTitleField,
      due_date: dueDateField.nullish(),
      notes: notesField.nullish(),
    }),
  ],
  { error: 'must be an item title, or an object { title, due_date, notes }' },
);

/** Creates a plan with its items, all or nothing, in one transaction. */
export default defineTool({
  id: 'write-plan',
  toolset: 'study',
  title: 'Write a study plan',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  description: 'Create a study plan with its items, all or nothing; to add to an existing plan, use add-plan-item.',
  get input() {
    return z.strictObject({
      title: planTitleField,
      items: z.array(item).min(1).max(MAX_ITEMS).describe('In order.'),
    });
  },
  get output() {
    return z.object({
      created_plan_id: z.int(),
      title: z.string(),
      status: planStatus,
      item_count: z.int(),
      item_ids: z.array(z.int()).describe("The new items' ids, in plan order."),
    });
  },
  example: {
    title: 'Chemistry midterm',
    items: ['Balance redox equations', { title: 'Practice exam', due_date: '2026-05-04', notes: 'Timed, 90 minutes' }],
  },
  async execute({ title, items }, { db, project, idFor, links }) {
    const requestId = await idFor('plan');
    const rows = JSON.stringify(
      items.map((entry, position) =>
        typeof entry === 'string'
          ? { position, title: entry }
          : { position, title: entry.title, due_date: entry.due_date ?? null, notes: entry.notes ?? null },
      ),
    );
    // The items are inserted only along with the plan: a retried attempt whose plan exists already adds nothing.
    const [, created] = await db.batch([
      db.execute(sql`
        with plan_ids as (${reserveIds(project.id, 'plan')}),
        plan as (
          insert into study_plans (project_id, id, title, request_id)
          select ${project.id}::uuid, last_id, ${title}::text, ${requestId}::uuid from plan_ids
          on conflict (project_id, request_id) do nothing
          returning id),
        item_ids as (${reserveIds(project.id, 'plan_item', items.length, sql`from plan`)})
        insert into study_plan_items (project_id, id, plan_id, position, title, due_date, notes)
        select ${project.id}::uuid, item_ids.last_id - ${items.length}::int + 1 + r.position, plan.id, r.position, r.title, r.due_date, r.notes
        from plan, item_ids, jsonb_to_recordset(${rows}::jsonb) as r(position int, title text, due_date date, notes text)`),
      db.execute(sql`
        select p.id, p.title, p.status,
               (select json_agg(i.id order by i.position) from study_plan_items i where i.project_id = p.project_id and i.plan_id = p.id) as item_ids,
               (select count(*)::int from study_plans o where o.project_id = p.project_id and lower(o.title) = lower(p.title) and o.id <> p.id) as namesakes
        from study_plans p where p.project_id = ${project.id} and p.request_id = ${requestId}`),
    ]);
    const plan = created.rows[0] as { id: number; title: string; status: 'active'; item_ids: number[]; namesakes: number };
    const shared =
      plan.namesakes > 0
        ? ` ${plural(plan.namesakes, 'other plan has', 'other plans have')} the same title: refer to this one by plan_id ${plan.id}.`
        : '';
    return ok(
      { created_plan_id: plan.id, title: plan.title, status: plan.status, item_count: plan.item_ids.length, item_ids: plan.item_ids },
      `Created plan ${plan.id} "${plan.title}" with ${plural(plan.item_ids.length, 'item')}.${shared}`,
      { links: linkList([links.record('plan', plan.id, plan.title), ...plan.item_ids.map((id) => links.record('plan_item', id))]) },
    );
  },
});
