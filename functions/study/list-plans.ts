import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { ITEM_STATUSES } from '../../drizzle/schema.ts';
import { ok } from '../../shared/core/contract.ts';
import { cursorField, nextCursorField } from '../../shared/core/cursor.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { limitField, planStatus, recordId } from './lib/fields.ts';
import { moreNote, pageOfRows, readCursor } from './lib/page.ts';
import { plural } from '../../shared/core/plural.ts';
import { isoTime } from './lib/sql.ts';
import { linkList } from '../../shared/core/links.ts';

const position = z.strictObject({ plans_before: recordId() });

const itemCounts = z.record(z.enum(['total', ...ITEM_STATUSES]), z.int());

const plan = z.object({
  plan_id: z.int(),
  title: z.string(),
  status: planStatus,
  created_at: z.string(),
  item_counts: itemCounts.describe('How many items the plan has, in total and by status.'),
});

/** The project's study plans, newest first, with how many items each has by status. */
export default defineTool({
  id: 'list-plans',
  toolset: 'study',
  title: 'List study plans',
  annotations: READ_ONLY,
  description: 'List the study plans, newest first, with item counts: to find a plan id or show the user their plans.',
  get input() {
    return z.strictObject({
      status: planStatus.optional(),
      limit: limitField(20, 100),
      cursor: cursorField.optional(),
    });
  },
  get output() {
    return z.object({ plans: z.array(plan), next_cursor: nextCursorField });
  },
  example: { limit: 10 },
  async execute({ status, limit, cursor }, { db, project, links }) {
    const scope = { status, limit };
    const after = readCursor(position, cursor, scope);
    if (!after.ok) return after;
    const before = after.value?.plans_before;
    const counts = sql.join(
      ITEM_STATUSES.map((itemStatus) => sql`${itemStatus}::text, count(*) filter (where i.status = ${itemStatus})::int`),
      sql`, `,
    );
    const { rows } = await db.execute(sql`
      select p.id as plan_id, p.title, p.status, ${isoTime(sql`p.created_at`)} as created_at,
             (select json_build_object('total', count(*)::int, ${counts}) from study_plan_items i
              where i.project_id = p.project_id and i.plan_id = p.id) as item_counts
      from study_plans p
      where p.project_id = ${project.id}
        ${status === undefined ? sql`` : sql`and p.status = ${status}`}
        ${before === undefined ? sql`` : sql`and p.id < ${before}`}
      order by p.id desc
      limit ${limit + 1}`);
    const page = pageOfRows(rows as unknown as z.output<typeof plan>[], limit, scope, (last) => ({ plans_before: last.plan_id }));
    const filter = status === undefined ? '' : ` with status ${status}`;
    const message =
      page.rows.length === 0
        ? before === undefined
          ? `This project has no plans${filter}.${status === undefined ? ' Create one with write-plan.' : ''}`
          : 'No more plans.'
        : `${plural(page.rows.length, 'plan')}${filter}, newest first.${moreNote(page, 'plans')}`;
    return ok({ plans: page.rows, next_cursor: page.next_cursor }, message, {
      truncated: page.truncated,
      links: linkList(page.rows.map((plan) => links.record('plan', plan.plan_id, plan.title))),
    });
  },
});
