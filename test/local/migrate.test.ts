// Migrations on the Neon stand-in, and the data step that follows them: task offsets filled in.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeDocument } from '../../functions/documents/lib/ingest.ts';
import { createProject, migrateDatabase } from '../../local/database.ts';
import { startNeonStandIn, type NeonStandIn } from '../../local/neon-http.ts';
import { createDb } from '../../shared/runtime/db.ts';
import type { Database } from '../../shared/core/database.ts';

let standIn: NeonStandIn;
let db: Database;

beforeAll(async () => {
  standIn = await startNeonStandIn();
  await migrateDatabase(standIn.connectionString);
  db = createDb(standIn.connectionString);
});

afterAll(async () => {
  await standIn?.close();
});

const CONTENT = [
  '# Plan 😀',
  'Intro with ëmoji 🙂 before the tasks.\r\n- [ ] First task',
  '```',
  '- [ ] Not a task: fenced',
  '```',
  '  * [x] Second task 🚀',
  '',
  '1. [ ] Third task',
].join('\n');

/**
 * Every task whose line, read by Postgres at its offset (substr counts code points), holds the
 * task's text: an independent judge of the offsets.
 */
async function misplacedTasks(documentId: string): Promise<unknown[]> {
  const { rows } = await db.execute(sql`select t.position, t.content_offset from tasks t join documents d on d.id = t.document_id
    where t.document_id = ${documentId}
      and not (strpos(split_part(replace(substr(d.content, t.content_offset + 1), E'\\r', E'\\n'), E'\\n', 1), t.text) > 0
               and (t.content_offset = 0 or substr(d.content, t.content_offset, 1) in (E'\\n', E'\\r')))`);
  return rows;
}

describe('task offsets', () => {
  it('are stored with every task, where Postgres finds its line', async () => {
    const { projectId } = await createProject(standIn.connectionString, 'Offsets');
    const { documentId, tasks } = await storeDocument(db, projectId, { title: 'Plan', content: CONTENT });
    expect(tasks.map((task) => task.text)).toEqual(['First task', 'Second task 🚀', 'Third task']);
    expect(await misplacedTasks(documentId)).toEqual([]);
  });

  it('are filled in by the migration for tasks stored before they existed, and only those', async () => {
    const { projectId } = await createProject(standIn.connectionString, 'Old rows');
    const { documentId } = await storeDocument(db, projectId, { title: 'Old plan', content: CONTENT });
    const other = await storeDocument(db, projectId, { title: 'Untouched', content: '- [ ] Keep me' });
    await db.execute(sql`update tasks set content_offset = null where document_id = ${documentId}`);
    await db.execute(sql`update tasks set content_offset = 999 where document_id = ${other.documentId}`);

    await migrateDatabase(standIn.connectionString);
    const { rows } = await db.execute(sql`select count(*)::int as n from tasks where content_offset is null`);
    expect(rows[0]).toEqual({ n: 0 });
    expect(await misplacedTasks(documentId)).toEqual([]);
    const untouched = await db.execute(sql`select content_offset from tasks where document_id = ${other.documentId}`);
    expect(untouched.rows).toEqual([{ content_offset: 999 }]);
  });
});
