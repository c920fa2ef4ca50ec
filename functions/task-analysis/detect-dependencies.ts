import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { ok } from '../../shared/core/contract.ts';
import { responseFormatField } from '../../shared/core/budget.ts';
import { defineTool } from '../../shared/core/tool.ts';
import { findCycles } from './lib/graph.ts';
import { loadTasks, relationshipShape, taskIds } from './lib/tasks.ts';
import { uuidArray } from '../../shared/runtime/db.ts';

/**
 * Detects prerequisite / blocks / related relationships among tasks with the configured detector
 * (an LLM, or the offline heuristic), and saves them for query-task-graph. Saving is idempotent:
 * the same edge detected again updates its confidence and rationale.
 */
export default defineTool({
  id: 'detect-dependencies',
  title: 'Detect dependencies',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  description:
    'Detect dependencies among 2 to 50 tasks: which must come first (prerequisite), which block others, which are related. Saves them so query-task-graph can walk them. Circular dependencies are reported as groups of tasks that depend on each other, with one example chain per group.',
  input: z.strictObject({
    task_ids: taskIds(2, 50),
    include_document_context: z.boolean().default(false).describe("Also give the detector each task's document text (slower, better context). Default false."),
    response_format: responseFormatField,
  }),
  output: z.object({
    detection_method: z.string(),
    relationships: z.array(relationshipShape),
    cycles: z
      .array(z.array(z.string()))
      .describe(
        'One example circular chain per group in cycle_groups: a shortest one, as task ids in order (each before the next, the last before the first). At most one per group, so at most 25.',
      ),
    cycle_groups: z
      .array(z.array(z.string()))
      .describe(
        'Groups of tasks caught in circular prerequisite/blocks dependencies: within a group, every task is (directly or through others) both before and after every other, so none can start first. Break a group by removing relationships between its tasks.',
      ),
  }),
  example: { task_ids: ['3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f', '9a1c2e3f-4b5d-4e6f-8a7b-0c1d2e3f4a5b'] },
  async execute({ task_ids, include_document_context }, { db, project, providers, signal }) {
    const tasks = await loadTasks(db, project.id, task_ids);
    if (!Array.isArray(tasks)) return tasks;
    let documentContext: Map<string, string> | undefined;
    if (include_document_context) {
      const ids = [...new Set(tasks.map((task) => task.document_id))];
      const { rows } = await db.execute(sql`select id, content from documents where project_id = ${project.id} and id = any(${uuidArray(ids)})`);
      documentContext = new Map((rows as { id: string; content: string }[]).map((row) => [row.id, row.content]));
    }
    const detector = providers.dependencies;
    const detected = await detector.detect(
      tasks.map((task) => ({ id: task.task_id, text: task.text, documentId: task.document_id, documentTitle: task.document_title, position: task.position })),
      { documentContext, signal },
    );
    const relationships = detected.map((r) => ({
      source_task_id: r.sourceTaskId,
      target_task_id: r.targetTaskId,
      type: r.type,
      confidence: Math.round(r.confidence * 1000) / 1000,
      rationale: r.rationale,
    }));
    if (relationships.length > 0) {
      const rows = JSON.stringify(relationships);
      await db.execute(sql`
        insert into task_relationships (project_id, source_task_id, target_task_id, type, confidence, detection_method, rationale)
        select ${project.id}::uuid, r.source_task_id, r.target_task_id, r.type, r.confidence, ${detector.id}, r.rationale
        from jsonb_to_recordset(${rows}::jsonb) as r(source_task_id uuid, target_task_id uuid, type text, confidence real, rationale text)
        on conflict (project_id, source_task_id, target_task_id, type)
        do update set confidence = excluded.confidence, rationale = excluded.rationale, detection_method = excluded.detection_method`);
    }
    const { groups, examples } = findCycles(relationships.filter((r) => r.type !== 'related'));
    const circular = groups.reduce((sum, group) => sum + group.length, 0);
    return ok(
      { detection_method: detector.id, relationships, cycles: examples, cycle_groups: groups },
      `Detected ${relationships.length} relationship${relationships.length === 1 ? '' : 's'} among ${tasks.length} tasks with ${detector.id}` +
        (groups.length
          ? `; ${circular} tasks depend on each other circularly, in ${groups.length} group${groups.length === 1 ? '' : 's'} (cycle_groups, one example chain each in cycles).`
          : '.'),
    );
  },
});
