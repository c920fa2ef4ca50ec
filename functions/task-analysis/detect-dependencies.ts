import * as z from 'zod';
import { ANSWER_BUDGETS, fitToBudget, responseFormatField, type ResponseFormat } from '../../shared/core/budget.ts';
import { ok } from '../../shared/core/contract.ts';
import { cursorField, decodeCursor, encodeCursor, nextCursorField } from '../../shared/core/cursor.ts';
import { linkList } from '../../shared/core/links.ts';
import { plural } from '../../shared/core/plural.ts';
import { uuid } from '../../shared/core/fields.ts';
import { defineTool } from '../../shared/core/tool.ts';
import type { DependencyDetector, DetectOptions } from '../../shared/core/providers.ts';
import { providersFromEnv } from '../../shared/providers/index.ts';
import { EXAMPLE_IDS } from '../../shared/records/example-ids.ts';
import { findCycles } from './lib/graph.ts';
import { savedRelationships, saveRelationships, type SavedRelationship } from './lib/relationships.ts';
import { documentContents, loadTasks, relationshipShape, relationshipType, taskIds, type TaskRow } from './lib/tasks.ts';

type Relationship = z.output<typeof relationshipShape>;

/** The last relationship a page gave, in page order: the next page starts after it. */
const position = z.strictObject({
  detector: z.string().max(200),
  after: z.tuple([z.number().min(0).max(1), uuid(), uuid(), relationshipType]),
});

/**
 * Detects prerequisite / blocks / related relationships among tasks with the configured detector
 * (an LLM, or the offline heuristic), and saves them for query-task-graph. Saving is idempotent:
 * the same edge detected again updates its confidence and rationale. The answer lists them most
 * confident first within the budget; a cursor pages through the rest as saved, without detecting
 * again.
 */
export default defineTool({
  id: 'detect-dependencies',
  toolset: 'task-analysis',
  title: 'Detect dependencies',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  description:
    'Detect and save the dependencies (prerequisite, blocks, related) and cycles among tasks, once, to order or link them; to read saved ones, use query-task-graph.',
  get input() {
    return z.strictObject({
      task_ids: taskIds(2, 50),
      include_document_context: z.boolean().default(false).describe("Also give the detector the tasks' documents (slower, better)."),
      response_format: responseFormatField,
      cursor: cursorField.nullish(),
    });
  },
  get output() {
    return z.object({
      detection_method: z.string(),
      relationship_count: z.int().describe('Relationships detected among the tasks (on later pages: saved among them by this detector).'),
      relationships: z.array(relationshipShape).describe('Most confident first.'),
      cycles: z
        .array(z.array(z.string()))
        .optional()
        .describe(
          'First page only: one example circular chain per group in cycle_groups, a shortest one, as task ids in order (each before the next, the last before the first). At most one per group, so at most 25.',
        ),
      cycle_groups: z
        .array(z.array(z.string()))
        .optional()
        .describe(
          'First page only: groups of tasks caught in circular prerequisite/blocks dependencies among the relationships detected: within a group, every task is (directly or through others) both before and after every other, so none can start first. Break a group by removing relationships between its tasks.',
        ),
      next_cursor: nextCursorField,
    });
  },
  example: { task_ids: [...EXAMPLE_IDS.tasks] },
  providers: providersFromEnv,
  async execute({ task_ids, include_document_context, response_format, cursor }, { db, project, providers, signal, links }) {
    const scope = { task_ids, include_document_context, response_format };
    const tasks = await loadTasks(db, project.id, task_ids);
    if (!Array.isArray(tasks)) return tasks;
    const textOf = new Map(tasks.map((task) => [task.task_id, task.text]));
    // The tasks the page's relationships name first, then the tasks asked about.
    const linksOf = (page: Relationship[]) =>
      linkList([...page.flatMap((r) => [r.source_task_id, r.target_task_id]), ...task_ids].map((id) => links.task(id, textOf.get(id))));

    if (cursor) {
      const decoded = decodeCursor(position, cursor, { scope, hint: `Example of a valid call: ${JSON.stringify({ task_ids })}` });
      if (!decoded.ok) return decoded;
      const { detector, after } = decoded.value;
      const [confidence, source, target, type] = after;
      // Ordered here, by the same comparison as the first page.
      const saved = (await savedRelationships(db, project.id, detector, task_ids)).sort(byConfidence);
      const rest = saved.filter((r) => isAfter(r, { confidence, source, target, type }));
      const page = pageOf(rest, response_format);
      const next_cursor = page.length < rest.length ? encodeCursor(cursorAt(detector, page.at(-1)!), scope) : null;
      return ok(
        { detection_method: detector, relationship_count: saved.length, relationships: page, next_cursor },
        `${plural(page.length, 'more relationship')} saved among ${plural(tasks.length, 'task')} by ${detector} (${saved.length - rest.length + page.length} of ${saved.length} given so far).` +
          (next_cursor ? ' Call again with the same fields and cursor set to next_cursor for the rest.' : ''),
        { truncated: next_cursor !== null, links: linksOf(page) },
      );
    }

    const documentContext = include_document_context ? await documentContents(db, project.id, tasks) : undefined;
    const detector = providers.dependencies;
    const relationships = await detect(detector, tasks, { documentContext, signal });
    await saveRelationships(db, project.id, detector.id, relationships);
    const { groups, examples } = findCycles(relationships.filter((r) => r.type !== 'related'));
    const circular = groups.reduce((sum, group) => sum + group.length, 0);
    const page = pageOf(relationships, response_format);
    const next_cursor = page.length < relationships.length ? encodeCursor(cursorAt(detector.id, page.at(-1)!), scope) : null;
    return ok(
      {
        detection_method: detector.id,
        relationship_count: relationships.length,
        relationships: page,
        cycles: examples,
        cycle_groups: groups,
        next_cursor,
      },
      `Detected ${plural(relationships.length, 'relationship')} among ${plural(tasks.length, 'task')} with ${detector.id}` +
        (groups.length
          ? `; ${circular} tasks depend on each other circularly, in ${plural(groups.length, 'group')} (cycle_groups, one example chain each in cycles).`
          : '.') +
        (next_cursor
          ? ` This page has the ${page.length} most confident; all are saved: call again with the same fields and cursor set to next_cursor for the rest.`
          : ''),
      { truncated: next_cursor !== null, links: linksOf(page) },
    );
  },
});

/** What `detector` finds among `tasks`, as saved and answered (confidence to 3 decimals), most confident first. */
async function detect(detector: DependencyDetector, tasks: TaskRow[], options: DetectOptions): Promise<SavedRelationship[]> {
  const detected = await detector.detect(
    tasks.map((task) => ({
      id: task.task_id,
      text: task.text,
      documentId: task.document_id,
      documentTitle: task.document_title,
      position: task.position,
    })),
    options,
  );
  return detected
    .map((r) => ({
      source_task_id: r.sourceTaskId,
      target_task_id: r.targetTaskId,
      type: r.type,
      confidence: Math.round(r.confidence * 1000) / 1000,
      rationale: r.rationale,
    }))
    .sort(byConfidence);
}

/** Most confident first, then by ids and type: the order of pages, in JS and in SQL alike. */
function byConfidence(a: Relationship, b: Relationship): number {
  return (
    b.confidence - a.confidence ||
    compare(a.source_task_id, b.source_task_id) ||
    compare(a.target_task_id, b.target_task_id) ||
    compare(a.type, b.type)
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function isAfter(r: Relationship, last: { confidence: number; source: string; target: string; type: string }): boolean {
  return (
    byConfidence(
      { source_task_id: last.source, target_task_id: last.target, type: last.type as Relationship['type'], confidence: last.confidence },
      r,
    ) < 0
  );
}

function cursorAt(detector: string, last: Relationship) {
  return { detector, after: [last.confidence, last.source_task_id, last.target_task_id, last.type] };
}

/** The relationships of one page: within the budget, the rationale in the detailed format only. */
function pageOf(relationships: (Relationship & { rationale?: string })[], format: ResponseFormat): Relationship[] {
  const shaped = relationships.map(({ rationale, ...r }) => ({
    source_task_id: r.source_task_id,
    target_task_id: r.target_task_id,
    type: r.type,
    confidence: r.confidence,
    ...(format === 'detailed' ? { rationale } : {}),
  }));
  return fitToBudget(shaped, ANSWER_BUDGETS[format].list);
}
