/**
 * The saved task relationships (table `task_relationships`), as the task-analysis tools write and
 * read them: detect-dependencies saves what a detector found and pages through it as saved;
 * query-task-graph walks them from one task, and says why a walk reached nothing.
 */
import { sql } from 'drizzle-orm';
import type * as z from 'zod';
import { uuidArray, type Database } from '../../../shared/core/database.ts';
import type { relationshipType } from './tasks.ts';

type RelationshipType = z.output<typeof relationshipType>;

/** A relationship a detector found, as it is saved and answered. */
export interface SavedRelationship {
  source_task_id: string;
  target_task_id: string;
  type: RelationshipType;
  confidence: number;
  rationale: string;
}

/**
 * Saves what detector `detectorId` found, in one statement. Saving is idempotent: an edge saved
 * before (by any detector) gets this detection's confidence, rationale and detector.
 */
export async function saveRelationships(
  db: Database,
  projectId: string,
  detectorId: string,
  relationships: readonly SavedRelationship[],
): Promise<void> {
  if (relationships.length === 0) return;
  const rows = JSON.stringify(relationships);
  await db.execute(sql`
        insert into task_relationships (project_id, source_task_id, target_task_id, type, confidence, detection_method, rationale)
        select ${projectId}::uuid, r.source_task_id, r.target_task_id, r.type, r.confidence, ${detectorId}, r.rationale
        from jsonb_to_recordset(${rows}::jsonb) as r(source_task_id uuid, target_task_id uuid, type text, confidence real, rationale text)
        on conflict (project_id, source_task_id, target_task_id, type)
        do update set confidence = excluded.confidence, rationale = excluded.rationale, detection_method = excluded.detection_method`);
}

/**
 * The relationships detector `detector` saved among `taskIds` (both ends among them), unordered:
 * at most 50 × 49 × 3 rows for the 50 tasks detect-dependencies takes.
 */
export async function savedRelationships(
  db: Database,
  projectId: string,
  detector: string,
  taskIds: string[],
): Promise<SavedRelationship[]> {
  const { rows } = await db.execute(sql`
        select source_task_id, target_task_id, type, confidence, rationale from task_relationships
        where project_id = ${projectId} and detection_method = ${detector}
          and source_task_id = any(${uuidArray(taskIds)}) and target_task_id = any(${uuidArray(taskIds)})`);
  return (rows as unknown as SavedRelationship[]).map((row) => ({ ...row, confidence: Number(row.confidence) }));
}

/** Where a walk starts, which relationships it follows, and how far. */
export interface WalkFilter {
  task_id: string;
  relationship_type: RelationshipType | 'all';
  /** incoming: to what the task depends on; outgoing: to what depends on it; both. */
  direction: 'outgoing' | 'incoming' | 'both';
  /** Hops from the start task, at most. */
  depth: number;
}

/** A saved relationship among the tasks a walk reached. */
export interface WalkedRelationship extends SavedRelationship {
  detection_method: string;
}

/** A task a walk reached, at its shortest distance from the start task. */
export interface ReachedTask {
  task_id: string;
  text: string;
  document_id: string;
  /** Hops from the start task, at its shortest. */
  depth: number;
}

/** One page of a walk. */
export interface WalkPage {
  /** The page's relationships among the tasks reached: nearest first, then most confident. */
  relationships: WalkedRelationship[];
  /** The tasks the page's relationships name, the start task excluded, nearest first. */
  tasks: ReachedTask[];
  /** Relationships among the tasks reached, over all pages. */
  total: number;
  /** Tasks reached, the start task excluded (0 when the page is empty). */
  reached: number;
}

/**
 * Walks the saved relationships of `filter` from its task, in one database round trip: a
 * recursive query (cycles end at the depth bound, each task counted at its shortest distance),
 * then the page `offset`, `limit` of the relationships among the tasks it reached, with the tasks
 * they name.
 */
export async function walkTaskGraph(
  db: Database,
  projectId: string,
  { task_id, relationship_type, direction, depth }: WalkFilter,
  { offset, limit }: { offset: number; limit: number },
): Promise<WalkPage> {
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
        from reach join task_relationships r on r.project_id = ${projectId} ${type} and (${step})
        where reach.depth < ${depth}
      ),
      nodes as (select task_id, min(depth) as depth from reach group by task_id),
      edges as (
        select r.source_task_id, r.target_task_id, r.type, r.confidence, r.rationale, r.detection_method,
               least(s.depth, t.depth) as nearest, count(*) over () as total
        from task_relationships r
        join nodes s on s.task_id = r.source_task_id join nodes t on t.task_id = r.target_task_id
        where r.project_id = ${projectId} ${type}
        order by least(s.depth, t.depth), r.confidence desc, r.source_task_id, r.target_task_id, r.type
        offset ${offset} limit ${limit}
      )`;
  const [edgeRows, nodeRows] = await db.batch([
    db.execute(sql`${walk} select edges.*, (select count(*)::int from nodes) - 1 as reached from edges
        order by nearest, confidence desc, source_task_id, target_task_id, type`),
    db.execute(sql`${walk} select t.id as task_id, t.text, t.document_id, nodes.depth
        from nodes join tasks t on t.id = nodes.task_id and t.project_id = ${projectId}
        where nodes.task_id <> ${task_id}::uuid
          and nodes.task_id in (select source_task_id from edges union select target_task_id from edges)
        order by nodes.depth, t.id`),
  ]);
  const edges = edgeRows.rows as (Omit<WalkedRelationship, 'confidence'> & {
    confidence: number | string;
    total: string;
    reached: number;
  })[];
  return {
    relationships: edges.map((edge) => ({
      source_task_id: edge.source_task_id,
      target_task_id: edge.target_task_id,
      type: edge.type,
      confidence: Number(edge.confidence),
      rationale: edge.rationale,
      detection_method: edge.detection_method,
    })),
    tasks: nodeRows.rows as unknown as ReachedTask[],
    total: Number(edges[0]?.total ?? 0),
    reached: edges[0]?.reached ?? 0,
  };
}

/**
 * Why a walk reached nothing: the task has no saved relationship at all (detect them first), or
 * only of other types or directions than the filter asked for (say which, and how to see them).
 */
export async function nothingReached(
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
