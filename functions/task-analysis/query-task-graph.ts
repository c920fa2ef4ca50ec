import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { ok } from '../../shared/core/contract.ts';
import { responseFormatField } from '../../shared/core/budget.ts';
import { uuid } from '../../shared/core/fields.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { loadTasks, relationshipShape } from './lib/tasks.ts';

/**
 * Walks the saved task relationships from one task, transitively up to `depth` hops, in one
 * database round trip (a recursive query; cycles end at the depth bound, each task is reported at
 * its shortest distance).
 */
export default defineTool({
  id: 'query-task-graph',
  title: 'Query task graph',
  annotations: READ_ONLY,
  description:
    'Walk the saved task relationships (from detect-dependencies) starting at one task: what it depends on (outgoing prerequisite edges point to what must come after), what depends on it, transitively up to a depth. Reads the database only.',
  input: z.strictObject({
    task_id: uuid().describe('The task to start from.'),
    relationship_type: z.enum(['prerequisite', 'blocks', 'related', 'all']).default('all').describe('Which relationships to follow (default all).'),
    direction: z
      .enum(['outgoing', 'incoming', 'both'])
      .default('both')
      .describe('outgoing: edges whose source is the task; incoming: edges pointing at it; both (default).'),
    depth: z.int().min(1).max(10).default(1).describe('How many hops to follow, 1 to 10 (default 1).'),
    limit: z.int().min(1).max(500).default(100).describe('Most relationships to return (default 100).'),
    response_format: responseFormatField,
  }),
  output: z.object({
    task: z.object({ task_id: z.string(), text: z.string() }),
    tasks: z.array(z.object({ task_id: z.string(), text: z.string(), document_id: z.string(), depth: z.int() })),
    relationships: z.array(relationshipShape.extend({ detection_method: z.string().optional() })),
  }),
  example: { task_id: '3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f', depth: 2 },
  async execute({ task_id, relationship_type, direction, depth, limit, response_format }, { db, project }) {
    const start = await loadTasks(db, project.id, [task_id]);
    if (!Array.isArray(start)) return start;
    const type = relationship_type === 'all' ? sql`` : sql`and r.type = ${relationship_type}`;
    const outgoing = direction !== 'incoming';
    const incoming = direction !== 'outgoing';
    const step = sql`(${outgoing} and r.source_task_id = reach.task_id) or (${incoming} and r.target_task_id = reach.task_id)`;
    const reach = sql`
      with recursive reach(task_id, depth) as (
        select ${task_id}::uuid, 0
        union
        select case when r.source_task_id = reach.task_id then r.target_task_id else r.source_task_id end, reach.depth + 1
        from reach join task_relationships r on r.project_id = ${project.id} ${type} and (${step})
        where reach.depth < ${depth}
      ),
      nodes as (select task_id, min(depth) as depth from reach group by task_id)`;
    const [nodeRows, edgeRows] = await db.batch([
      db.execute(sql`${reach}
        select t.id as task_id, t.text, t.document_id, nodes.depth from nodes join tasks t on t.id = nodes.task_id and t.project_id = ${project.id}
        order by nodes.depth, t.id`),
      db.execute(sql`${reach}
        select r.source_task_id, r.target_task_id, r.type, r.confidence, r.rationale, r.detection_method
        from task_relationships r
        join nodes s on s.task_id = r.source_task_id join nodes t on t.task_id = r.target_task_id
        where r.project_id = ${project.id} ${type}
        order by least(s.depth, t.depth), r.confidence desc, r.source_task_id, r.target_task_id
        limit ${limit + 1}`),
    ]);
    const edges = edgeRows.rows as { source_task_id: string; target_task_id: string; type: 'prerequisite' | 'blocks' | 'related'; confidence: number; rationale: string; detection_method: string }[];
    const relationships = edges.slice(0, limit).map((edge) => ({
      source_task_id: edge.source_task_id,
      target_task_id: edge.target_task_id,
      type: edge.type,
      confidence: Number(edge.confidence),
      rationale: edge.rationale,
      ...(response_format === 'detailed' ? { detection_method: edge.detection_method } : {}),
    }));
    const tasks = (nodeRows.rows as { task_id: string; text: string; document_id: string; depth: number }[]).filter((t) => t.task_id !== task_id);
    const truncated = edges.length > limit;
    return ok(
      { task: { task_id, text: start[0]!.text }, tasks, relationships },
      relationships.length === 0
        ? 'No saved relationships reach this task. Run detect-dependencies on it and related tasks first.'
        : `${tasks.length} task${tasks.length === 1 ? '' : 's'} within ${depth} hop${depth === 1 ? '' : 's'}, ${relationships.length} relationship${relationships.length === 1 ? '' : 's'}${truncated ? ` (first ${limit}; raise limit for more)` : ''}.`,
      { truncated },
    );
  },
});
