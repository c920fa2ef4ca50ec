import { sql } from 'drizzle-orm';
import * as z from 'zod';
import type { ITEM_STATUSES } from '../../drizzle/schema.ts';
import { ok } from '../../shared/core/contract.ts';
import { oneOfRequired } from '../../shared/core/fields.ts';
import { defineTool } from '../../shared/core/tool.ts';
import { idOrName, itemStatus, itemTitleField, planIdField, planTitleField } from './lib/fields.ts';
import { ambiguous, CANDIDATES_READ, findPlanIfNamed, notFound } from './lib/lookup.ts';
import { setStatus } from './lib/status.ts';
import { statusSentence } from './lib/words.ts';
import { linkList } from '../../shared/core/links.ts';

interface ItemRow {
  item_id: number;
  title: string;
  status: (typeof ITEM_STATUSES)[number];
  plan_id: number;
  plan_title: string;
}

/**
 * Sets the status of one plan item, named by id or by title (optionally within a plan). The item is
 * named by `item_id` (an id, or a title) or `item_title`, the field names seed clients send: one of
 * them is required, a rule between fields no model API takes in a schema (a documented exception).
 */
export default defineTool({
  id: 'update-item-status',
  toolset: 'study',
  title: 'Update a plan item status',
  // It overwrites the item's status; setting the one it already has changes nothing, so repeating the call is harmless.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  description: "Set a plan item's status, the item named by item_id or item_title.",
  get input() {
    return oneOfRequired(
      z.strictObject({
        status: itemStatus,
        item_id: idOrName('item', itemTitleField, 'title').optional().describe('Its id or title. Give item_id or item_title.'),
        item_title: itemTitleField.optional().describe('Instead of item_id.'),
        plan_id: planIdField.optional().describe('Only look in this plan; latest: the newest.'),
        plan_title: planTitleField.optional().describe('Only look in plans of this title.'),
      }),
      ['item_id', 'item_title'],
    );
  },
  get output() {
    return z.object({
      item_id: z.int(),
      title: z.string(),
      plan_id: z.int(),
      status: itemStatus,
      previous_status: itemStatus,
      changed: z.boolean().describe('False when the item already had this status.'),
    });
  },
  example: { plan_title: 'Spanish B1 exam', item_id: 'Review the subjunctive', status: 'completed' },
  async execute({ status, item_id, item_title, plan_id, plan_title }, { db, project, idFor, links }) {
    // An id, and the titles given (item_id may hold one): each narrows the choice.
    const id = typeof item_id === 'number' ? item_id : undefined;
    const titles = [...new Set([typeof item_id === 'string' ? item_id : undefined, item_title].filter((t) => t !== undefined))];
    const plan = await findPlanIfNamed(db, project.id, { plan_id, plan_title });
    if (plan && 'ok' in plan) return plan;
    const { rows } = await db.execute(sql`
      select i.id as item_id, i.title, i.status, i.plan_id, p.title as plan_title
      from study_plan_items i join study_plans p on p.project_id = i.project_id and p.id = i.plan_id
      where i.project_id = ${project.id}
        ${id === undefined ? sql`` : sql`and i.id = ${id}`}
        ${sql.join(
          titles.map((title) => sql`and lower(i.title) = lower(${title})`),
          sql` `,
        )}
        ${plan ? sql`and i.plan_id = ${plan.plan_id}` : sql``}
      order by i.plan_id desc, i.position, i.id
      limit ${CANDIDATES_READ}`);
    const items = rows as unknown as ItemRow[];
    const query = {
      ...(item_id !== undefined ? { item_id } : {}),
      ...(item_title !== undefined ? { item_title } : {}),
      ...(plan_id !== undefined ? { plan_id } : {}),
      ...(plan_title !== undefined ? { plan_title } : {}),
    };
    const within = plan ? ` in plan ${plan.plan_id} "${plan.title}"` : ' in this project';
    if (items.length === 0) {
      const titled = titles.map((title) => `titled "${title}"`).join(' and ');
      const what = id === undefined ? `No item is ${titled}` : `No item with id ${id}${titled ? ` is ${titled}` : ' exists'}`;
      return notFound(
        'item',
        query,
        `${what}${within}.`,
        'Ask the user which item they mean, or call list-plan-items to see the items that exist.',
      );
    }
    if (items.length > 1) {
      return ambiguous('item', query, items, {
        idField: 'item_id',
        what: 'items',
        label: (i) => `item ${i.item_id} "${i.title}" (${i.status}) in plan ${i.plan_id} "${i.plan_title}"`,
      });
    }
    const item = items[0]!;
    const { previous, changed } = await setStatus(db, { id: await idFor('status'), projectId: project.id }, 'item', item.item_id, status);
    return ok(
      { item_id: item.item_id, title: item.title, plan_id: item.plan_id, status, previous_status: previous, changed },
      statusSentence(`item ${item.item_id} "${item.title}"`, status, previous),
      { links: linkList([links.record('plan_item', item.item_id, item.title), links.record('plan', item.plan_id)]) },
    );
  },
});
