import * as z from 'zod';
import { ANSWER_BUDGETS, fitToBudget, jsonLength, responseFormatField } from '../../shared/core/budget.ts';
import { ok } from '../../shared/core/contract.ts';
import { cursorField, decodeCursor, encodeCursor, nextCursorField, positionIndex } from '../../shared/core/cursor.ts';
import { uuid } from '../../shared/core/fields.ts';
import { linkList } from '../../shared/core/links.ts';
import { plural } from '../../shared/core/plural.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { EXAMPLE_IDS } from '../../shared/records/example-ids.ts';
import type { Edge } from './lib/graph.ts';
import { nothingReached, walkTaskGraph } from './lib/relationships.ts';
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
    const walk = await walkTaskGraph(db, project.id, { task_id, relationship_type, direction, depth }, { offset, limit });
    const { total, reached: taskCount } = walk;
    const named = new Map(
      walk.tasks.map((node) => [
        node.task_id,
        { task_id: node.task_id, text: node.text, depth: node.depth, ...(detailed ? { document_id: node.document_id } : {}) },
      ]),
    );
    const relationships = walk.relationships.map((edge) => ({
      source_task_id: edge.source_task_id,
      target_task_id: edge.target_task_id,
      type: edge.type,
      confidence: edge.confidence,
      ...(detailed ? { rationale: edge.rationale, detection_method: edge.detection_method } : {}),
    }));
    const page = fitWithTheirTasks(relationships, named, ANSWER_BUDGETS[response_format].list);
    const onPage = new Set(page.flatMap((relationship) => namedTasksOf(relationship, named)));
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

/** The ends of `relationship` that `named` has (the start task is not among them). */
function namedTasksOf(relationship: Edge, named: ReadonlyMap<string, unknown>): string[] {
  return [relationship.source_task_id, relationship.target_task_id].filter((id) => named.has(id));
}

/**
 * The relationships that fit `budget` characters, in order: a relationship costs its JSON and that
 * of the tasks it names first.
 */
function fitWithTheirTasks<R extends Edge>(relationships: R[], named: ReadonlyMap<string, unknown>, budget: number): R[] {
  const listed = new Set<string>();
  return fitToBudget(relationships, budget, {
    size: (relationship) =>
      jsonLength(relationship) +
      1 +
      namedTasksOf(relationship, named).reduce((n, id) => n + (listed.has(id) ? 0 : (listed.add(id), jsonLength(named.get(id)) + 1)), 0),
  });
}
