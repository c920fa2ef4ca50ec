import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { fail, ok } from '../../shared/core/contract.ts';
import { responseFormatField } from '../../shared/core/budget.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { paginate, PAGINATION_DEFAULTS } from './lib/pagination.ts';
import { loadTasks, taskIds } from './lib/tasks.ts';
import { uuidArray } from '../../shared/runtime/db.ts';

const { chunkSize: CHUNK_SIZE, overlap: OVERLAP } = PAGINATION_DEFAULTS;

const documentTask = z.object({
  task_id: z.string(),
  text: z.string(),
  position: z.int(),
  embedding_status: z.string().optional(),
});

/**
 * The parent documents of some tasks: full markdown (paginated past 50,000 characters) and all of
 * each document's tasks.
 */
export default defineTool({
  id: 'get-document-context',
  title: 'Get document context',
  annotations: READ_ONLY,
  description: `Get the documents that contain the given tasks: each document's markdown and ALL its tasks, to understand a task in context. Documents longer than ${CHUNK_SIZE.toLocaleString('en')} characters come in chunks (overlapping by ${OVERLAP}); ask for the next one with chunk_number.`,
  input: z.strictObject({
    task_ids: taskIds(1, 50),
    chunk_number: z.int().min(1).default(1).describe('Which chunk of long documents to return, from 1 (default 1).'),
    response_format: responseFormatField,
  }),
  output: z.object({
    documents: z.array(
      z.object({
        document_id: z.string(),
        title: z.string(),
        content: z.string(),
        tasks: z.array(documentTask),
        pagination: z.object({ current_chunk: z.int(), total_chunks: z.int(), chunk_size: z.int(), overlap: z.int() }),
      }),
    ),
  }),
  example: { task_ids: ['3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f'] },
  async execute({ task_ids, chunk_number, response_format }, { db, project }) {
    const tasks = await loadTasks(db, project.id, task_ids);
    if (!Array.isArray(tasks)) return tasks;
    const documentIds = [...new Set(tasks.map((task) => task.document_id))];

    // Documents and all their tasks, read together: one snapshot.
    const [documentRows, taskRows] = await db.batch([
      db.execute(sql`select id, title, content from documents where project_id = ${project.id} and id = any(${uuidArray(documentIds)})`),
      db.execute(sql`select id, document_id, text, position, embedding_status from tasks
        where project_id = ${project.id} and document_id = any(${uuidArray(documentIds)}) order by document_id, position`),
    ]);
    const byId = new Map((documentRows.rows as { id: string; title: string; content: string }[]).map((row) => [row.id, row]));
    const vanished = documentIds.find((id) => !byId.has(id));
    if (vanished) {
      return fail('DOCUMENT_DELETED', `Document ${vanished} was deleted during execution.`, {
        hint: 'The document no longer exists; search again (semantic-search) for current tasks. Repeating this call will not bring it back.',
        details: { entity_type: 'document', document_id: vanished },
      });
    }

    const pages = documentIds.map((id) => ({ id, pages: paginate(byId.get(id)!.content) }));
    const mostChunks = Math.max(...pages.map((p) => p.pages.totalChunks));
    if (chunk_number > mostChunks) {
      return fail('VALIDATION_ERROR', `Field 'chunk_number' must be between 1 and ${mostChunks} for these documents, but received ${chunk_number}.`, {
        hint: `Example of a valid call: ${JSON.stringify({ task_ids, chunk_number: mostChunks })}`,
        details: { fields: [{ field: 'chunk_number', code: 'too_big', message: `at most ${mostChunks}`, expected: `between 1 and ${mostChunks}`, received: String(chunk_number) }] },
      });
    }
    const tasksOf = Map.groupBy(taskRows.rows as { id: string; document_id: string; text: string; position: number; embedding_status: string }[], (row) => row.document_id);
    const result = pages.map(({ id, pages: doc }) => {
      const document = byId.get(id)!;
      // A short document has no chunk N > 1: it answers empty content, its pagination says why.
      const content = chunk_number <= doc.totalChunks ? doc.chunk(chunk_number) : '';
      return {
        document_id: id,
        title: document.title,
        content,
        tasks: (tasksOf.get(id) ?? []).map((task) => ({
          task_id: task.id,
          text: task.text,
          position: task.position,
          ...(response_format === 'detailed' ? { embedding_status: task.embedding_status } : {}),
        })),
        pagination: { current_chunk: chunk_number, total_chunks: doc.totalChunks, chunk_size: CHUNK_SIZE, overlap: OVERLAP },
      };
    });
    const more = result.filter((d) => d.pagination.total_chunks > chunk_number);
    return ok(
      { documents: result },
      `${result.length} document${result.length === 1 ? '' : 's'} with ${result.reduce((n, d) => n + d.tasks.length, 0)} tasks.` +
        (more.length ? ` ${more.length} document${more.length === 1 ? ' has' : 's have'} more: call again with chunk_number ${chunk_number + 1}.` : ''),
      { truncated: more.length > 0 },
    );
  },
});
