/**
 * One task as a record (`GET /tasks/:id`): its text, its document, where it is, whether it is
 * searchable, and how many saved relationships touch it.
 */
import { sql } from 'drizzle-orm';
import * as z from 'zod';
import type { Database } from '../core/database.ts';
import { chunkOf } from './chunks.ts';

export const taskRecordShape = z.object({
  task_id: z.string(),
  text: z.string(),
  position: z.int().describe("The task's order in its document, from 0."),
  document_id: z.string(),
  document_title: z.string(),
  chunk_number: z.int().describe('The chunk of its document that holds its line (get-document-context, GET /documents/:id?chunk=).'),
  embedding_status: z.enum(['pending', 'completed', 'failed']),
  relationship_count: z.object({
    outgoing: z.int().describe('Saved relationships whose source is this task.'),
    incoming: z.int().describe('Saved relationships whose target is this task.'),
  }),
  embedding_model: z.string().nullable().optional().describe('detailed only: the provider that embedded it.'),
  content_offset: z.int().optional().describe('detailed only: where its line starts in the document, in characters.'),
});

export type TaskRecord = z.output<typeof taskRecordShape>;

/** The task `id` of the project, or undefined when the project has no such task. One query. */
export async function readTaskRecord(db: Database, projectId: string, id: string, detailed: boolean): Promise<TaskRecord | undefined> {
  const { rows } = await db.execute(sql`
    select t.id as task_id, t.text, t.position, t.document_id, d.title as document_title, t.embedding_status, t.embedding_model,
           coalesce(t.content_offset, 0) as content_offset,
           (select count(*)::int from task_relationships r where r.project_id = t.project_id and r.source_task_id = t.id) as outgoing,
           (select count(*)::int from task_relationships r where r.project_id = t.project_id and r.target_task_id = t.id) as incoming
    from tasks t join documents d on d.id = t.document_id
    where t.project_id = ${projectId} and t.id = ${id}`);
  const row = rows[0] as
    (Omit<TaskRecord, 'relationship_count' | 'chunk_number'> & { outgoing: number; incoming: number; content_offset: number }) | undefined;
  if (!row) return undefined;
  const { outgoing, incoming, embedding_model, content_offset, ...task } = row;
  return {
    ...task,
    chunk_number: chunkOf(content_offset),
    relationship_count: { outgoing, incoming },
    ...(detailed ? { embedding_model, content_offset } : {}),
  };
}
