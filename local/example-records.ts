/**
 * The records the tools' examples name (shared/records/example-ids.ts), so that every example runs
 * as it is: a document with two embedded tasks and a relationship between them. Ids are fixed, so
 * one project at a time holds them: resetting gives them to `projectId`, fresh (the examples of
 * replace-document and delete-document consume them). Used by the contract suite and the benches.
 */
import { sql } from 'drizzle-orm';
import { extractTasks } from '../functions/documents/lib/task-extraction.ts';
import type { Database } from '../shared/core/database.ts';
import { offlineEmbeddings } from '../shared/providers/offline.ts';
import { EXAMPLE_IDS } from '../shared/records/example-ids.ts';
import { vectorLiteral } from '../shared/records/vectors.ts';

const CONTENT =
  '# Q3 hiring plan\n- [ ] Open the senior backend engineer role\n- [ ] Interview candidates after the senior backend engineer role is open\n';

/** Gives the example records to `projectId`, as new, in one transaction. */
export async function resetExampleRecords(db: Database, projectId: string): Promise<void> {
  const tasks = extractTasks(CONTENT);
  const vectors = await offlineEmbeddings.embed(tasks.map((task) => task.text));
  const rows = JSON.stringify(
    tasks.map((task, i) => ({
      id: EXAMPLE_IDS.tasks[i],
      text: task.text,
      position: task.position,
      content_offset: task.offset,
      embedding: vectorLiteral(vectors[i]!),
    })),
  );
  await db.batch([
    db.execute(sql`delete from tasks where id = any(${sql.param([...EXAMPLE_IDS.tasks])}::uuid[])`),
    db.execute(sql`delete from documents where id = ${EXAMPLE_IDS.document}`),
    db.execute(
      sql`insert into documents (id, project_id, title, content) values (${EXAMPLE_IDS.document}, ${projectId}, 'Q3 hiring plan', ${CONTENT})`,
    ),
    db.execute(sql`insert into tasks (id, project_id, document_id, text, position, content_offset, embedding, embedding_model, embedding_status)
      select r.id, ${projectId}::uuid, ${EXAMPLE_IDS.document}::uuid, r.text, r.position, r.content_offset, r.embedding::vector, ${offlineEmbeddings.id}, 'completed'
      from jsonb_to_recordset(${rows}::jsonb) as r(id uuid, text text, position int, content_offset int, embedding text)`),
    db.execute(sql`insert into task_relationships (project_id, source_task_id, target_task_id, type, confidence, detection_method, rationale)
      values (${projectId}, ${EXAMPLE_IDS.tasks[0]}, ${EXAMPLE_IDS.tasks[1]}, 'prerequisite', 0.9, 'example', 'the role must be open before interviews')`),
  ]);
}
