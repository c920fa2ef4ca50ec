import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { ok } from '../../shared/core/contract.ts';
import { cursorField, nextCursorField } from '../../shared/core/cursor.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { INT4 } from '../../shared/core/fields.ts';
import { itemStatus, limitField, planIdField, planStatus, planTitleField, recordId } from './lib/fields.ts';
import { findPlanIfNamed, type Plan } from './lib/lookup.ts';
import { moreNote, pageOfRows, readCursor } from './lib/page.ts';
import { plural } from '../../shared/core/plural.ts';
import { linkList } from '../../shared/core/links.ts';

const position = z.strictObject({
  after_plan: recordId(),
  after_position: z.int().min(INT4.min).max(INT4.max),
  after_item: recordId(),
});

const item = z.object({
  item_id: z.int(),
  title: z.string(),
  status: itemStatus,
  due_date: z.string().nullable(),
  notes: z.string().nullable(),
});

const planItems = z.object({ plan_id: z.int(), title: z.string(), status: planStatus, items: z.array(item) });

interface ItemRow extends z.output<typeof item> {
  plan_id: number;
  plan_title: string;
  plan_status: Plan['status'];
  position: number;
}

/** The items of one plan (by id, "latest" or title), or of every plan, grouped by plan. */
export default defineTool({
  id: 'list-plan-items',
  toolset: 'study',
  title: 'List plan items',
  annotations: READ_ONLY,
  description: "List a plan's items in order, the plan named by plan_id and/or plan_title, else every plan's items.",
  get input() {
    return z.strictObject({
      plan_id: planIdField.optional(),
      plan_title: planTitleField.optional(),
      status: itemStatus.optional(),
      limit: limitField(50, 200),
      cursor: cursorField.optional(),
    });
  },
  get output() {
    return z.object({ plan_items: z.array(planItems).describe('The items, grouped by plan.'), next_cursor: nextCursorField });
  },
  example: { plan_title: 'Spanish B1 exam' },
  async execute({ plan_id, plan_title, status, limit, cursor }, { db, project, links }) {
    const scope = { plan_id, plan_title, status, limit };
    const from = readCursor(position, cursor, scope);
    if (!from.ok) return from;
    const after = from.value;
    const plan = await findPlanIfNamed(db, project.id, { plan_id, plan_title });
    if (plan && 'ok' in plan) return plan;
    const { rows } = await db.execute(sql`
      select i.plan_id, p.title as plan_title, p.status as plan_status, i.id as item_id, i.title, i.status,
             i.due_date::text as due_date, i.notes, i.position
      from study_plan_items i join study_plans p on p.project_id = i.project_id and p.id = i.plan_id
      where i.project_id = ${project.id}
        ${plan ? sql`and i.plan_id = ${plan.plan_id}` : sql``}
        ${status === undefined ? sql`` : sql`and i.status = ${status}`}
        ${after ? sql`and (i.plan_id < ${after.after_plan} or (i.plan_id = ${after.after_plan} and (i.position, i.id) > (${after.after_position}, ${after.after_item})))` : sql``}
      order by i.plan_id desc, i.position, i.id
      limit ${limit + 1}`);
    const page = pageOfRows(rows as unknown as ItemRow[], limit, scope, (last) => ({
      after_plan: last.plan_id,
      after_position: last.position,
      after_item: last.item_id,
    }));

    const plans: z.output<typeof planItems>[] = [];
    if (plan && after === undefined) plans.push({ plan_id: plan.plan_id, title: plan.title, status: plan.status, items: [] });
    for (const row of page.rows) {
      let group = plans[plans.length - 1];
      if (group?.plan_id !== row.plan_id)
        plans.push((group = { plan_id: row.plan_id, title: row.plan_title, status: row.plan_status, items: [] }));
      group.items.push({ item_id: row.item_id, title: row.title, status: row.status, due_date: row.due_date, notes: row.notes });
    }
    const filter = status === undefined ? '' : ` with status ${status}`;
    const where = plan ? `plan ${plan.plan_id} "${plan.title}"` : plural(plans.length, 'plan');
    const message =
      page.rows.length === 0
        ? `${after ? 'No more items' : `No items${filter}`} in ${plan ? where : 'any plan of this project'}.${plan || after ? '' : ' Create a plan with write-plan.'}`
        : `${plural(page.rows.length, 'item')}${filter} from ${where}, in plan order.${moreNote(page, 'items')}`;
    return ok({ plan_items: plans, next_cursor: page.next_cursor }, message, {
      truncated: page.truncated,
      links: linkList(
        plans.flatMap((p) => [
          links.record('plan', p.plan_id, p.title),
          ...p.items.map((i) => links.record('plan_item', i.item_id, i.title)),
        ]),
      ),
    });
  },
});
