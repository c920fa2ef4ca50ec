/**
 * Documents in bounded pages, for get-document-context and `GET /documents/:id`: one chunk of a
 * document's markdown (cut by Postgres' `substr`, so nothing longer leaves the database) with the
 * tasks whose line starts in that chunk, as many as the answer's budget holds. A page may hold
 * several documents; the next page continues where the budget ran out, in the middle of a
 * document's tasks if need be (its content is then not repeated).
 */
import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { ANSWER_BUDGETS, fitToBudget, jsonLength, type ResponseFormat } from '../core/budget.ts';
import { positionIndex } from '../core/cursor.ts';
import { uuidArray, type Database } from '../core/database.ts';
import { CHUNK_DEFAULTS, chunkLayout, chunkWindow, type ChunkLayout } from './chunks.ts';

/** Documents are at most this many characters (about 1 MiB, the request body limit). */
export const MAX_DOCUMENT_CHARS = 900_000;

/** The most chunks a document can have: a larger chunk number names no chunk of any document. */
export const MAX_CHUNKS = chunkLayout(MAX_DOCUMENT_CHARS).totalChunks;

/**
 * A chunk number (get-document-context's `chunk_number`, `GET /documents/:id?chunk=`): from 1 to
 * {@link MAX_CHUNKS}, default 1. Whether the documents asked for have that chunk is known once
 * they are read.
 */
export function chunkNumber() {
  return z.int().min(1).max(MAX_CHUNKS).default(1);
}

/** One task of a document page. */
const documentTaskShape = z.object({
  task_id: z.string(),
  text: z.string(),
  position: z.int().describe("The task's order in the document, from 0."),
  embedding_status: z
    .enum(['pending', 'completed', 'failed'])
    .optional()
    .describe('detailed only: whether semantic-search can find it yet.'),
  content_offset: z.int().optional().describe("detailed only: where the task's line starts in the document, in characters."),
});

/** One document of a page: a chunk of its content and a page of that chunk's tasks. */
export const documentPageShape = z.object({
  document_id: z.string(),
  title: z.string(),
  content: z
    .string()
    .nullable()
    .describe('The markdown of this chunk; null when an earlier page of the same call already gave it (this page continues its tasks).'),
  pagination: z.object({
    current_chunk: z.int(),
    total_chunks: z.int(),
    chunk_size: z.int().describe('Characters per chunk (Unicode code points).'),
    overlap: z.int().describe('Characters each chunk repeats from the end of the previous one.'),
    total_characters: z.int(),
  }),
  task_count: z.int().describe('Tasks in the whole document.'),
  chunk_task_count: z.int().describe('Tasks whose line starts in this chunk (other chunks hold the rest).'),
  tasks_from: z.int().describe("How many of this chunk's tasks earlier pages gave: tasks[0] is the chunk's task number tasks_from + 1."),
  tasks: z.array(documentTaskShape),
});

export type DocumentPageEntry = z.output<typeof documentPageShape>;

/** What a page is read from: a document's title, length and task counts for the chunk asked. */
export interface DocumentSummary {
  id: string;
  title: string;
  layout: ChunkLayout;
  taskCount: number;
  chunkTaskCount: number;
}

/**
 * Where a page starts: the index of a document in the call's list, and how many of its chunk's
 * tasks earlier pages gave (its content too, when that is more than 0). Cursors encode it; a
 * chunk of chunkSize characters holds fewer tasks than that, each on a line of its own.
 */
export const pagePositionSchema = z.strictObject({ document: positionIndex, task: z.int().min(0).max(CHUNK_DEFAULTS.chunkSize) });

export type PagePosition = z.output<typeof pagePositionSchema>;

export interface DocumentPage {
  entries: DocumentPageEntry[];
  /** Where the next page starts; null when this page ends the call's documents. */
  next: PagePosition | null;
  /** A document of the page that no longer exists (deleted while the call ran). */
  vanished?: string;
}

/** No task is shorter than this as JSON: a page never fetches more tasks than its budget could hold. */
const MIN_TASK_JSON_CHARS = 60;

/**
 * The summaries of `ids` (those the project has; the others are absent from the map) for chunk
 * `chunk`. One query: titles, lengths in characters, and task counts, without reading content out.
 */
export async function readDocumentSummaries(
  db: Database,
  projectId: string,
  ids: readonly string[],
  chunk: number,
): Promise<Map<string, DocumentSummary>> {
  const span = chunkWindow(chunk);
  const { rows } = await db.execute(sql`
    select d.id, d.title, char_length(d.content)::int as length,
      (select count(*)::int from tasks t where t.document_id = d.id) as task_count,
      (select count(*)::int from tasks t where t.document_id = d.id
         and coalesce(t.content_offset, 0) >= ${span.start} and coalesce(t.content_offset, 0) < ${span.end}) as chunk_task_count
    from documents d where d.project_id = ${projectId} and d.id = any(${uuidArray(ids)})`);
  return new Map(
    (rows as { id: string; title: string; length: number; task_count: number; chunk_task_count: number }[]).map((row) => [
      row.id,
      { id: row.id, title: row.title, layout: chunkLayout(row.length), taskCount: row.task_count, chunkTaskCount: row.chunk_task_count },
    ]),
  );
}

/**
 * Reads the page of `documents` (in the call's order) that starts at `from`, for chunk `chunk`
 * (which every one of them must have), within the budgets of `format`. One round trip.
 */
export async function readDocumentPage(
  db: Database,
  projectId: string,
  documents: readonly DocumentSummary[],
  { chunk, from, format }: { chunk: number; from: PagePosition; format: ResponseFormat },
): Promise<DocumentPage> {
  // A position past the call's documents (a forged cursor) has nothing to read.
  if (from.document >= documents.length) return { entries: [], next: null };
  const budget = ANSWER_BUDGETS[format];
  const planned = plannedDocuments(documents, chunk, from, budget.content);
  const read = await readChunks(db, projectId, planned, chunk, from, Math.floor(budget.list / MIN_TASK_JSON_CHARS) + 1);
  if ('vanished' in read) return { entries: [], next: null, vanished: read.vanished };
  const { contents, tasksOf } = read;

  const entries: DocumentPageEntry[] = [];
  let listBudget = budget.list;
  for (const [index, document] of planned.entries()) {
    const skip = index === 0 ? from.task : 0;
    const tasks = (tasksOf.get(document.id) ?? []).map((row) => ({
      task_id: row.task_id,
      text: row.text,
      position: row.position,
      ...(format === 'detailed' ? { embedding_status: row.embedding_status, content_offset: row.content_offset } : {}),
    }));
    // The first document of a page always advances; a later one whose tasks do not fit starts the next page.
    const page = fitToBudget(tasks, listBudget, { atLeast: index === 0 ? 1 : 0 });
    if (index > 0 && page.length === 0 && document.chunkTaskCount > 0)
      return { entries, next: { document: from.document + index, task: 0 } };
    listBudget -= jsonLength(page);
    const { chunkSize, overlap } = CHUNK_DEFAULTS;
    entries.push({
      document_id: document.id,
      title: document.title,
      content: contents.get(document.id) ?? null,
      pagination: {
        current_chunk: chunk,
        total_chunks: document.layout.totalChunks,
        chunk_size: chunkSize,
        overlap,
        total_characters: document.layout.totalCharacters,
      },
      task_count: document.taskCount,
      chunk_task_count: document.chunkTaskCount,
      tasks_from: skip,
      tasks: page,
    });
    const given = skip + page.length;
    if (given < document.chunkTaskCount) return { entries, next: { document: from.document + index, task: given } };
  }
  const after = from.document + planned.length;
  return { entries, next: after < documents.length ? { document: after, task: 0 } : null };
}

/** The documents from `from` on whose chunk fits `contentBudget` (the first always does); their tasks may end the page sooner. */
function plannedDocuments(
  documents: readonly DocumentSummary[],
  chunk: number,
  from: PagePosition,
  contentBudget: number,
): DocumentSummary[] {
  const planned: DocumentSummary[] = [];
  let content = 0;
  for (let index = from.document; index < documents.length; index++) {
    const document = documents[index]!;
    const { start, end } = document.layout.span(chunk);
    const length = index === from.document && from.task > 0 ? 0 : end - start;
    if (planned.length > 0 && content + length > contentBudget) break;
    planned.push(document);
    content += length;
  }
  return planned;
}

/** A task of a chunk, as the page's query reads it. */
type ChunkTaskRow = {
  task_id: string;
  document_id: string;
  text: string;
  position: number;
  embedding_status: 'pending' | 'completed' | 'failed';
  content_offset: number;
};

/**
 * Chunk `chunk` of the `planned` documents (but the first's, when the page starts inside its tasks)
 * and at most `limit` of each one's tasks in that chunk, from `from.task` for the first, in one
 * batch; or the id of a document that vanished meanwhile.
 */
async function readChunks(
  db: Database,
  projectId: string,
  planned: readonly DocumentSummary[],
  chunk: number,
  from: PagePosition,
  limit: number,
): Promise<{ contents: Map<string, string | null>; tasksOf: Map<string, ChunkTaskRow[]> } | { vanished: string }> {
  const span = chunkWindow(chunk);
  const ids = planned.map((document) => document.id);
  const withContent = from.task > 0 ? ids.slice(1) : ids;
  const [contentRows, taskRows] = await db.batch([
    db.execute(sql`select id, case when id = any(${uuidArray(withContent)}) then substr(content, ${span.start + 1}, ${span.end - span.start}) end as content
      from documents where project_id = ${projectId} and id = any(${uuidArray(ids)})`),
    db.execute(sql`select task_id, document_id, text, position, embedding_status, content_offset from (
        select t.id as task_id, t.document_id, t.text, t.position, t.embedding_status, coalesce(t.content_offset, 0) as content_offset,
               (row_number() over (partition by t.document_id order by t.position) - 1)::int as rank
        from tasks t
        where t.project_id = ${projectId} and t.document_id = any(${uuidArray(ids)})
          and coalesce(t.content_offset, 0) >= ${span.start} and coalesce(t.content_offset, 0) < ${span.end}
      ) chunk_tasks
      where rank >= (case when document_id = ${ids[0]}::uuid then ${from.task}::int else 0 end)
        and rank < (case when document_id = ${ids[0]}::uuid then ${from.task}::int else 0 end) + ${limit}::int
      order by document_id, position`),
  ]);
  const contents = new Map((contentRows.rows as { id: string; content: string | null }[]).map((row) => [row.id, row.content]));
  const vanished = ids.find((id) => !contents.has(id));
  if (vanished) return { vanished };
  return { contents, tasksOf: Map.groupBy(taskRows.rows as ChunkTaskRow[], (row) => row.document_id) };
}
