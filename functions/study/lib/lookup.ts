/**
 * Finding study records the way an agent names them (by id, by "latest", by title or name), and
 * the failures every study tool answers the same way: NOT_FOUND saying what was looked for, and
 * CONFLICT listing the candidates when a title names several records.
 *
 * Every query filters by the caller's project: another project's id is simply not found.
 */
import { sql } from 'drizzle-orm';
import type { PLAN_STATUSES } from '../../../drizzle/schema.ts';
import { fail, type Failure } from '../../../shared/core/contract.ts';
import type { Database } from '../../../shared/core/database.ts';
import type { PlanRef } from './fields.ts';
import { isoTime } from './sql.ts';

/** Most candidates listed in an ambiguity CONFLICT. */
const MAX_CANDIDATES = 20;

/**
 * NOT_FOUND for a study record: `entity_type` and `query` (exactly what was looked for) in the
 * details, and a message ending with what to do next (ask the user, or list what exists).
 */
export function notFound(entityType: string, query: Record<string, unknown>, message: string, next: string): Failure {
  return fail('NOT_FOUND', `${message} ${next}`, { hint: next, details: { entity_type: entityType, query } });
}

/** Most candidates a title lookup reads: one more than it lists, to know whether there are more. */
export const CANDIDATES_READ = MAX_CANDIDATES + 1;

/**
 * CONFLICT for a title that names several records: the candidates (id and title at least; up to
 * 20, from a query reading {@link CANDIDATES_READ}) are listed so the agent can ask the user which
 * one they mean, then call again by id.
 */
export function ambiguous<C extends object>(
  entityType: string,
  query: Record<string, unknown>,
  candidates: C[],
  describe: { idField: keyof C & string; label: (candidate: C) => string; what: string },
): Failure {
  const shown = candidates.slice(0, MAX_CANDIDATES);
  const many = candidates.length > MAX_CANDIDATES;
  const ids = shown.map((candidate) => String(candidate[describe.idField]));
  return fail(
    'CONFLICT',
    `${many ? `More than ${MAX_CANDIDATES}` : candidates.length} ${describe.what} match ${quoteQuery(query)}: ${shown.map(describe.label).join('; ')}${many ? '; …' : ''}. Ask the user which one they mean, then call again with ${describe.idField}.`,
    {
      hint: `Call again with ${describe.idField} set to one of: ${ids.join(', ')}.`,
      details: { entity_type: entityType, query, candidates: shown },
    },
  );
}

function quoteQuery(query: Record<string, unknown>): string {
  return Object.entries(query)
    .map(([field, value]) => `${field} ${JSON.stringify(value)}`)
    .join(' and ');
}

export interface Plan {
  plan_id: number;
  title: string;
  status: (typeof PLAN_STATUSES)[number];
  created_at: string;
}

const LIST_PLANS = 'Ask the user which plan they mean, or call list-plans to see the plans that exist.';

const planColumns = sql`id as plan_id, title, status, ${isoTime(sql`created_at`)} as created_at`;

/**
 * The plan named by `ref`, each field narrowing the choice: `plan_title` (exact, ignoring case) to
 * the plans of that title, `plan_id` to the one with that id or, "latest", the most recently
 * created; neither means "latest". NOT_FOUND when none matches, CONFLICT listing the candidates
 * when a title alone matches several.
 */
export async function findPlan(db: Database, projectId: string, ref: PlanRef): Promise<Plan | Failure> {
  const { plan_title } = ref;
  const plan_id = ref.plan_id ?? (plan_title === undefined ? 'latest' : undefined);
  const { rows } = await db.execute(sql`select ${planColumns} from study_plans
    where project_id = ${projectId}
      ${plan_title === undefined ? sql`` : sql`and lower(title) = lower(${plan_title})`}
      ${typeof plan_id === 'number' ? sql`and id = ${plan_id}` : sql``}
    order by id desc limit ${plan_id === 'latest' ? 1 : CANDIDATES_READ}`);
  const plans = rows as unknown as Plan[];
  const query = { ...(plan_id !== undefined && { plan_id }), ...(plan_title !== undefined && { plan_title }) };
  if (plans.length === 0) {
    if (plan_title !== undefined) {
      const which =
        typeof plan_id === 'number'
          ? `Plan ${plan_id} is not titled "${plan_title}", or does not exist,`
          : `No plan is titled "${plan_title}"`;
      return notFound('plan', query, `${which} in this project (titles match exactly, ignoring case).`, LIST_PLANS);
    }
    if (plan_id === 'latest')
      return notFound('plan', query, 'This project has no plans yet, so there is no latest plan.', 'Create one with write-plan.');
    return notFound('plan', query, `No plan with id ${plan_id} exists in this project.`, LIST_PLANS);
  }
  if (plans.length > 1) {
    return ambiguous('plan', query, plans, {
      idField: 'plan_id',
      what: 'plans',
      label: (p) => `plan ${p.plan_id} "${p.title}" (${p.status}, created ${p.created_at})`,
    });
  }
  return plans[0]!;
}

/** {@link findPlan} when `ref` names a plan; undefined when it names none (both fields absent). */
export async function findPlanIfNamed(db: Database, projectId: string, ref: PlanRef): Promise<Plan | Failure | undefined> {
  return ref.plan_id === undefined && ref.plan_title === undefined ? undefined : findPlan(db, projectId, ref);
}

export interface Topic {
  topic_id: number;
  topic_name: string;
}

/** The topic named by `topic_id` or `topic_name` (names are unique per project, ignoring case). NOT_FOUND otherwise. */
export async function findTopic(
  db: Database,
  projectId: string,
  ref: { topic_id?: number | undefined; topic_name?: string | undefined },
): Promise<Topic | Failure> {
  const where = ref.topic_name !== undefined ? sql`lower(name) = lower(${ref.topic_name})` : sql`id = ${ref.topic_id}`;
  const { rows } = await db.execute(
    sql`select id as topic_id, name as topic_name from study_topics where project_id = ${projectId} and ${where}`,
  );
  if (rows.length > 0) return rows[0] as unknown as Topic;
  const query = ref.topic_name !== undefined ? { topic_name: ref.topic_name } : { topic_id: ref.topic_id };
  const what = ref.topic_name !== undefined ? `No topic is named "${ref.topic_name}"` : `No topic with id ${ref.topic_id} exists`;
  return notFound('topic', query, `${what} in this project.`, TOPIC_NEXT);
}

/** What to do about an unknown topic. */
export const TOPIC_NEXT =
  'Ask the user which topic they mean; get-weak-topics lists the topics that have attempts, and quiz-pre-fetch creates a topic by name.';
