/**
 * Database chores shared by `npm run dev`, `npm run db:migrate`, the seed and the test setup:
 * applying the drizzle migrations and creating a project with its API key.
 */
import { fileURLToPath } from 'node:url';
import { migrate } from 'drizzle-orm/neon-http/migrator';
import { projects } from '../drizzle/schema.ts';
import { issueApiKey } from '../shared/auth/keys.ts';
import { sql } from 'drizzle-orm';
import { extractTasks } from '../functions/documents/lib/task-extraction.ts';
import { createDb } from '../shared/runtime/db.ts';
import { uuidArray, type Database } from '../shared/core/database.ts';

const MIGRATIONS_FOLDER = fileURLToPath(new URL('../drizzle/migrations', import.meta.url));

/** Documents whose task offsets are filled in per statement (each statement reads their content). */
const BACKFILL_BATCH_DOCUMENTS = 20;

/**
 * Applies every migration not yet applied (Neon or the local stand-in alike), then fills in what
 * SQL alone cannot: the content offsets of tasks stored before tasks had one.
 */
export async function migrateDatabase(databaseUrl: string): Promise<void> {
  const db = createDb(databaseUrl);
  await migrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
  await backfillTaskOffsets(db);
}

/**
 * Sets `tasks.content_offset` where it is null, by extracting the tasks of their documents again
 * (the same extraction, so positions match), a few documents at a time. A task the extraction no
 * longer finds gets 0 (the first chunk). Idempotent.
 */
async function backfillTaskOffsets(db: Database): Promise<void> {
  for (;;) {
    const { rows } = await db.execute(sql`select id, content from documents
      where id in (select document_id from tasks where content_offset is null limit ${BACKFILL_BATCH_DOCUMENTS})`);
    const documents = rows as { id: string; content: string }[];
    if (documents.length === 0) return;
    const offsets = documents.flatMap((document) =>
      extractTasks(document.content).map((task) => ({ document_id: document.id, position: task.position, content_offset: task.offset })),
    );
    await db.batch([
      db.execute(sql`update tasks as t set content_offset = r.content_offset
        from jsonb_to_recordset(${JSON.stringify(offsets)}::jsonb) as r(document_id uuid, position int, content_offset int)
        where t.document_id = r.document_id and t.position = r.position and t.content_offset is null`),
      db.execute(sql`update tasks set content_offset = 0
        where document_id = any(${uuidArray(documents.map((document) => document.id))}) and content_offset is null`),
    ]);
  }
}

export type CreatedProject = {
  projectId: string;
  apiKey: string;
};

/** Creates a project and an API key for it (a new signed key unless one is given). */
export async function createProject(databaseUrl: string, name: string, apiKey?: string): Promise<CreatedProject> {
  const db = createDb(databaseUrl);
  const [project] = await db.insert(projects).values({ name }).returning({ id: projects.id });
  const { key } = await issueApiKey(db, { projectId: project!.id, name: `${name} key`, ...(apiKey && { key: apiKey }) });
  return { projectId: project!.id, apiKey: key };
}

/** Adds a new signed API key to a project; answers the key. */
export async function addApiKey(databaseUrl: string, projectId: string, name: string): Promise<string> {
  return (await issueApiKey(createDb(databaseUrl), { projectId, name })).key;
}
