/**
 * What the task-analysis tools share: input pieces, the output shapes every tool names the same
 * way (so an agent can chain them), and loading tasks by id (and their documents' content) within
 * the caller's project.
 */
import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { notFound, type Failure } from '../../../shared/core/contract.ts';
import { uuidList } from '../../../shared/core/fields.ts';
import { uuidArray, type Database } from '../../../shared/core/database.ts';

/** A list of task ids, unique, between `min` and `max` long. */
export function taskIds(min: number, max: number) {
  return uuidList({ min, max });
}

export const relationshipType = z.enum(['prerequisite', 'blocks', 'related']);

/** `relationships[]` in every tool. */
export const relationshipShape = z.object({
  source_task_id: z
    .string()
    .describe('prerequisite: must be done before the target; blocks: stands in the way of the target; related: no order.'),
  target_task_id: z.string(),
  type: relationshipType,
  confidence: z.number().describe('0 to 1.'),
  rationale: z.string().optional().describe('detailed only: why the detector saw this relationship.'),
  detection_method: z.string().optional().describe('detailed only: the detector that saved it.'),
});

export interface TaskRow {
  task_id: string;
  text: string;
  position: number;
  document_id: string;
  document_title: string;
  embedding_status: 'pending' | 'completed' | 'failed';
  embedding_model: string | null;
}

/**
 * Loads tasks by id within the project, in the order asked. Ids of other projects behave exactly
 * like unknown ids: NOT_FOUND naming every missing one.
 */
export async function loadTasks(
  db: Database,
  projectId: string,
  ids: string[],
  field: 'task_ids' | 'task_id' = 'task_ids',
): Promise<TaskRow[] | Failure> {
  const { rows } = await db.execute(sql`
    select t.id as task_id, t.text, t.position, t.document_id, d.title as document_title, t.embedding_status, t.embedding_model
    from tasks t join documents d on d.id = t.document_id
    where t.project_id = ${projectId} and t.id = any(${uuidArray(ids)})`);
  const byId = new Map((rows as unknown as TaskRow[]).map((row) => [row.task_id, row]));
  const missing = ids.filter((id) => !byId.has(id));
  if (missing.length > 0) return tasksNotFound(missing, field);
  return ids.map((id) => byId.get(id)!);
}

/** The content of each document of `tasks`, by document id: the prose a dependency detector may read. */
export async function documentContents(db: Database, projectId: string, tasks: readonly TaskRow[]): Promise<Map<string, string>> {
  const ids = [...new Set(tasks.map((task) => task.document_id))];
  const { rows } = await db.execute(sql`select id, content from documents where project_id = ${projectId} and id = any(${uuidArray(ids)})`);
  return new Map((rows as { id: string; content: string }[]).map((row) => [row.id, row.content]));
}

/** NOT_FOUND naming the task ids the project does not have. */
export function tasksNotFound(missing: string[], field: 'task_ids' | 'task_id' = 'task_ids'): Failure {
  return notFound('task', { [field]: field === 'task_id' ? missing[0]! : missing }, TASK_IDS_HINT);
}

const TASK_IDS_HINT = 'Find task ids with semantic-search, or read them from add-document or get-document-context.';
