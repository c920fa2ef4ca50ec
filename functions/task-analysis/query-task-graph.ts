import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { ANSWER_BUDGETS, fitToBudget, jsonLength, responseFormatField } from '../../shared/core/budget.ts';
import { ok } from '../../shared/core/contract.ts';
import { cursorField, decodeCursor, encodeCursor, nextCursorField, positionIndex } from '../../shared/core/cursor.ts';
import { uuid } from '../../shared/core/fields.ts';
import { linkList } from '../../shared/core/links.ts';
import { plural } from '../../shared/core/plural.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { EXAMPLE_IDS } from '../../shared/records/example-ids.ts';
import type { Database } from '../../shared/core/database.ts';
import { loadTasks, relationshipShape } from './lib/tasks.ts';

const reachedTask = z.object({
  task_id: z.string(),
  text: z.string(),
  depth: z.int().describe('Hops from the start task, at its shortest.'),
  document_id: z.string().optional().describe('detailed only.'),
});

const position = z.strictObject({ offset: positionIndex });

/**
 * Walks the saved task relationships from one task, transitively up to `depth` hops, in one
 * database round trip (a recursive query; cycles end at the depth bound, each task is reported at
 * its shortest distance). Relationships come nearest first, a page at a time, each page with the
 * tasks it names.
 */
export default defineTool({
  id: 'query-task-graph',
  toolset: 'task-analysis',
  title: 'Query task graph',
  annotations: READ_ONLY,
  description:
    'Walk the dependencies detect-dependencies saved, from one task up to a depth: to plan an order of work or see what a delay affects.',
  get input() {
    return z.strictObject({
      task_id: uuid(),
      relationship_type: z.enum(['prerequisite', 'blocks', 'related', 'all']).default('all'),
      direction: z
        .enum(['outgoing', 'incoming', 'both'])
        .default('both')
        .describe('incoming: what the task depends on; outgoing: what depends on it; both (default).'),
      depth: z.int().min(1).max(10).default(1),
      limit: z.int().min(1).max(500).default(100),
      response_format: responseFormatField,
      cursor: cursorField.nullish(),
    });
  },
  get output() {
    return z.object({
      task: z.object({ task_id: z.string(), text: z.string() }),
      task_count: z.int().describe('Tasks reached, the start task excluded.'),
      relationship_count: z.int().describe('Relationships among the tasks reached, over all pages.'),
      relationships: z.array(relationshipShape),
      tasks: z.array(reachedTask).describe("The tasks this page's relationships name (the start task excluded), nearest first."),
      next_cursor: nextCursorField,
    });
  },
  example: { task_id: EXAMPLE_IDS.tasks[0], depth: 2 },
  async execute({ task_id, relationship_type, direction, depth, limit, response_format, cursor }, { db, project, links }) {
    const scope = { task_id, relationship_type, direction, depth, limit, response_format };
    let offset = 0;
    if (cursor) {
      const decoded = decodeCursor(position, cursor, { scope, hint: `Example of a valid call: ${JSON.stringify({ task_id, depth })}` });
      if (!decoded.ok) return decoded;
      offset = decoded.value.offset;
    }
    const start = await loadTasks(db, project.id, [task_id], 'task_id');
    if (!Array.isArray(start)) return start;
    const detailed = response_format === 'detailed';
    const type = relationship_type === 'all' ? sql`` : sql`and r.type = ${relationship_type}`;
    const outgoing = direction !== 'incoming';
    const incoming = direction !== 'outgoing';
    const step = sql`(${outgoing} and r.source_task_id = reach.task_id) or (${incoming} and r.target_task_id = reach.task_id)`;
    // The walk, and this page of the relationships among the tasks it reached (nearest first).
    const walk = sql`
      with recursive reach(task_id, depth) as (
        select ${task_id}::uuid, 0
        union
        select case when r.source_task_id = reach.task_id then r.target_task_id else r.source_task_id end, reach.depth + 1
        from reach join task_relationships r on r.project_id = ${project.id} ${type} and (${step})
        where reach.depth < ${depth}
      ),
      nodes as (select task_id, min(depth) as depth from reach group by task_id),
      edges as (
        select r.source_task_id, r.target_task_id, r.type, r.confidence, r.rationale, r.detection_method,
               least(s.depth, t.depth) as nearest, count(*) over () as total
        from task_relationships r
        join nodes s on s.task_id = r.source_task_id join nodes t on t.task_id = r.target_task_id
        where r.project_id = ${project.id} ${type}
        order by least(s.depth, t.depth), r.confidence desc, r.source_task_id, r.target_task_id, r.type
        offset ${offset} limit ${limit}
      )`;
    const [edgeRows, nodeRows] = await db.batch([
      db.execute(sql`${walk} select edges.*, (select count(*)::int from nodes) - 1 as reached from edges
        order by nearest, confidence desc, source_task_id, target_task_id, type`),
      db.execute(sql`${walk} select t.id as task_id, t.text, t.document_id, nodes.depth
        from nodes join tasks t on t.id = nodes.task_id and t.project_id = ${project.id}
        where nodes.task_id <> ${task_id}::uuid
          and nodes.task_id in (select source_task_id from edges union select target_task_id from edges)
        order by nodes.depth, t.id`),
    ]);
    const edges = edgeRows.rows as {
      source_task_id: string;
      target_task_id: string;
      type: 'prerequisite' | 'blocks' | 'related';
      confidence: number;
      rationale: string;
      detection_method: string;
      total: string;
      reached: number;
    }[];
    const total = Number(edges[0]?.total ?? 0);
    const taskCount = edges[0]?.reached ?? 0;
    const named = new Map(
      (nodeRows.rows as { task_id: string; text: string; document_id: string; depth: number }[]).map((node) => [
        node.task_id,
        { task_id: node.task_id, text: node.text, depth: node.depth, ...(detailed ? { document_id: node.document_id } : {}) },
      ]),
    );
    const relationships = edges.map((edge) => ({
      source_task_id: edge.source_task_id,
      target_task_id: edge.target_task_id,
      type: edge.type,
      confidence: Number(edge.confidence),
      ...(detailed ? { rationale: edge.rationale, detection_method: edge.detection_method } : {}),
    }));
    // A relationship costs its JSON and that of the tasks it names first.
    const listed = new Set<string>();
    const tasksOf = (relationship: { source_task_id: string; target_task_id: string }) =>
      [relationship.source_task_id, relationship.target_task_id].filter((id) => named.has(id));
    const page = fitToBudget(relationships, ANSWER_BUDGETS[response_format].list, {
      size: (relationship) =>
        jsonLength(relationship) +
        1 +
        tasksOf(relationship).reduce((n, id) => n + (listed.has(id) ? 0 : (listed.add(id), jsonLength(named.get(id)) + 1)), 0),
    });
    const onPage = new Set(page.flatMap(tasksOf));
    const tasks = [...named.values()].filter((task) => onPage.has(task.task_id));
    const next = offset + page.length < total ? offset + page.length : null;
    const next_cursor = next === null ? null : encodeCursor({ offset: next }, scope);
    const message =
      total === 0
        ? await nothingReached(db, project.id, task_id, { relationship_type, direction })
        : `${plural(taskCount, 'task')} within ${plural(depth, 'hop')}, ${plural(total, 'relationship')}` +
          (next_cursor || offset > 0 ? `; this page has relationships ${offset + 1} to ${offset + page.length}` : '') +
          '.' +
          (next_cursor ? ' Call again with the same fields and cursor set to next_cursor for the rest.' : '');
    return ok(
      {
        task: { task_id, text: start[0]!.text },
        task_count: taskCount,
        relationship_count: total,
        relationships: page,
        tasks,
        next_cursor,
      },
      message,
      {
        truncated: next_cursor !== null,
        links: linkList([links.task(task_id, start[0]!.text), ...tasks.map((task) => links.task(task.task_id, task.text))]),
      },
    );
  },
});

/**
 * Why a walk reached nothing: the task has no saved relationship at all (detect them first), or
 * only of other types or directions than the filter asked for (say which, and how to see them).
 */
async function nothingReached(
  db: Database,
  projectId: string,
  taskId: string,
  filter: { relationship_type: string; direction: string },
): Promise<string> {
  const none = 'No saved relationships reach this task. Run detect-dependencies on it and related tasks first.';
  if (filter.relationship_type === 'all' && filter.direction === 'both') return none;
  const { rows } = await db.execute(sql`
    select type, count(*) filter (where source_task_id = ${taskId}::uuid)::int as outgoing, count(*) filter (where target_task_id = ${taskId}::uuid)::int as incoming
    from task_relationships where project_id = ${projectId} and (source_task_id = ${taskId}::uuid or target_task_id = ${taskId}::uuid)
    group by type order by type`);
  const counts = rows as { type: string; outgoing: number; incoming: number }[];
  if (counts.length === 0) return none;
  const listed = counts.map(({ type, outgoing, incoming }) => `${type}: ${outgoing} outgoing, ${incoming} incoming`).join('; ');
  const asked = [
    filter.relationship_type === 'all' ? '' : `of type ${filter.relationship_type}`,
    filter.direction === 'both' ? '' : `${filter.direction}`,
  ]
    .filter(Boolean)
    .join(', ');
  return `No saved relationships ${asked} reach this task, but it has others (${listed}). Call again with relationship_type 'all' and direction 'both' to follow them.`;
}
