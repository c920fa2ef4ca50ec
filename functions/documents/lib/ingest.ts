/**
 * Documents in: store a markdown document with the tasks extracted from it, then embed the tasks.
 * Shared by the document tools and the seed.
 *
 * A document and its tasks are written in one transaction. Embedding happens after, batch by
 * batch: a provider failure marks that batch `failed` with the error (retry with `embed-tasks`)
 * instead of failing the call. Ids derive from the call, so a retried call never stores the
 * document twice.
 */
import { sql, type SQL } from 'drizzle-orm';
import { uuidArray, type Database } from '../../../shared/core/database.ts';
import { ProviderError } from '../../../shared/providers/types.ts';
import type { EmbeddingProvider } from '../../../shared/core/providers.ts';
import { vectorLiteral } from '../../../shared/records/vectors.ts';
import { extractTasks } from './task-extraction.ts';

/** Texts per embeddings request (and per UPDATE of the stored vectors). */
export const EMBED_BATCH_SIZE = 100;

export interface StoredTask {
  id: string;
  text: string;
  position: number;
  /** Where the task's line starts in the document, in characters. */
  offset: number;
}

export interface EmbeddingReport {
  embedded: number;
  failed: number;
  /** The provider's message for the first failed batch. */
  error?: string;
}

/** Where the ids of new rows come from: `context.idFor` in a tool, so that a retry writes the same rows. */
export type IdSource = (purpose: string) => Promise<string>;

/** Fresh random ids, for callers that are not tools (the seed, benchmarks). */
export const randomIds: IdSource = async () => crypto.randomUUID();

/**
 * Writes a document and its tasks (pending embedding) in one transaction. With `replaceId`, the
 * document keeps its id and its old tasks (and their relationships) are replaced.
 *
 * Safe to repeat: ids come from `idFor` (`document`, `task:<position>`), and rows already written
 * under them are recognised, not written again. A retry of a call whose first attempt committed
 * (its answer lost on the way back) therefore changes nothing, and keeps the tasks' embeddings and
 * relationships.
 */
export async function storeDocument(
  db: Database,
  projectId: string,
  document: { title: string; content: string },
  { idFor = randomIds, replaceId }: { idFor?: IdSource; replaceId?: string } = {},
): Promise<{ documentId: string; tasks: StoredTask[] }> {
  const documentId = replaceId ?? (await idFor('document'));
  const extracted = extractTasks(document.content);
  const ids = await Promise.all(extracted.map((task) => idFor(`task:${task.position}`)));
  const tasks = extracted.map((task, i) => ({ id: ids[i]!, text: task.text, position: task.position, offset: task.offset }));
  const writeDocument = replaceId
    ? db.execute(sql`update documents set title = ${document.title}, content = ${document.content}, updated_at = now()
        where id = ${documentId} and project_id = ${projectId}`)
    : db.execute(sql`insert into documents (id, project_id, title, content) values (${documentId}, ${projectId}, ${document.title}, ${document.content})
        on conflict (id) do nothing`);
  const statements = [writeDocument];
  if (replaceId) {
    // The old tasks go, except those this call wrote already (an earlier attempt that committed).
    statements.push(
      db.execute(sql`delete from tasks where document_id = ${documentId} and project_id = ${projectId} and id <> all(${uuidArray(ids)})`),
    );
  }
  if (tasks.length > 0) statements.push(db.execute(insertTasks(projectId, documentId, tasks)));
  await db.batch(statements as [(typeof statements)[number], ...typeof statements]);
  return { documentId, tasks };
}

function insertTasks(projectId: string, documentId: string, tasks: StoredTask[]): SQL {
  const rows = JSON.stringify(tasks.map((t) => ({ id: t.id, text: t.text, position: t.position, content_offset: t.offset })));
  return sql`insert into tasks (id, project_id, document_id, text, position, content_offset)
    select r.id, ${projectId}::uuid, ${documentId}::uuid, r.text, r.position, r.content_offset
    from jsonb_to_recordset(${rows}::jsonb) as r(id uuid, text text, position int, content_offset int)
    on conflict (id) do nothing`;
}

/**
 * Embeds `tasks` and stores their vectors with the provider's id; batches the provider rejects are
 * marked `failed` with its message. Other errors (the database) propagate. After each batch,
 * `progress` (a tool's `context.progress`) is told how many tasks are done of all.
 */
export async function embedTasks(
  db: Database,
  projectId: string,
  tasks: Pick<StoredTask, 'id' | 'text'>[],
  embeddings: EmbeddingProvider,
  signal?: AbortSignal,
  progress?: (done: number, total: number, message: string) => void,
): Promise<EmbeddingReport> {
  const report: EmbeddingReport = { embedded: 0, failed: 0 };
  for (let start = 0; start < tasks.length; start += EMBED_BATCH_SIZE) {
    if (start > 0) progress?.(start, tasks.length, `${start} of ${tasks.length} tasks embedded`);
    const batch = tasks.slice(start, start + EMBED_BATCH_SIZE);
    let vectors: Float32Array[];
    try {
      vectors = await embeddings.embed(
        batch.map((task) => task.text),
        signal,
      );
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      report.failed += batch.length;
      report.error ??= error.message;
      await db.execute(sql`update tasks set embedding_status = 'failed', embedding_error = ${error.message}
        where project_id = ${projectId} and id = any(${uuidArray(batch.map((task) => task.id))})`);
      continue;
    }
    const rows = JSON.stringify(batch.map((task, i) => ({ id: task.id, embedding: vectorLiteral(vectors[i]!) })));
    await db.execute(sql`update tasks as t
      set embedding = v.embedding::vector, embedding_status = 'completed', embedding_model = ${embeddings.id}, embedding_error = null
      from jsonb_to_recordset(${rows}::jsonb) as v(id uuid, embedding text)
      where t.id = v.id and t.project_id = ${projectId}`);
    report.embedded += batch.length;
  }
  if (tasks.length > 0) progress?.(tasks.length, tasks.length, `${tasks.length} of ${tasks.length} tasks embedded`);
  return report;
}
