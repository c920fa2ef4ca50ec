import * as z from 'zod';
import { ok } from '../../shared/core/contract.ts';
import { defineTool } from '../../shared/core/tool.ts';
import { planIdField, planStatus, planTitleField } from './lib/fields.ts';
import { findPlan } from './lib/lookup.ts';
import { setStatus } from './lib/status.ts';
import { statusSentence } from './lib/words.ts';
import { linkList } from '../../shared/core/links.ts';

/** Sets the status of a plan, named by id, "latest" or title. */
export default defineTool({
  id: 'update-plan-status',
  toolset: 'study',
  title: 'Update a study plan status',
  // It overwrites the plan's status; setting the one it already has changes nothing, so repeating the call is harmless.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  description: "Set a study plan's status (its items keep theirs), the plan named by plan_id and/or plan_title, else the newest.",
  get input() {
    return z.strictObject({
      status: planStatus,
      plan_id: planIdField.optional(),
      plan_title: planTitleField.optional(),
    });
  },
  get output() {
    return z.object({
      plan_id: z.int(),
      title: z.string(),
      status: planStatus,
      previous_status: planStatus,
      changed: z.boolean().describe('False when the plan already had this status.'),
    });
  },
  example: { plan_title: 'Spanish B1 exam', status: 'active' },
  async execute({ status, plan_id, plan_title }, { db, project, idFor, links }) {
    const plan = await findPlan(db, project.id, { plan_id, plan_title });
    if ('ok' in plan) return plan;
    const { previous, changed } = await setStatus(db, { id: await idFor('status'), projectId: project.id }, 'plan', plan.plan_id, status);
    return ok(
      { plan_id: plan.plan_id, title: plan.title, status, previous_status: previous, changed },
      statusSentence(`plan ${plan.plan_id} "${plan.title}"`, status, previous),
      { links: linkList([links.record('plan', plan.plan_id, plan.title)]) },
    );
  },
});
