import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { responseFormatField } from '../../shared/core/budget.ts';
import { fail, ok } from '../../shared/core/contract.ts';
import { cursorField, decodeCursor, encodeCursor, nextCursorField } from '../../shared/core/cursor.ts';
import { linkList } from '../../shared/core/links.ts';
import { plural } from '../../shared/core/plural.ts';
import { INT4 } from '../../shared/core/fields.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import {
  documentPageShape,
  MAX_CHUNKS,
  pagePositionSchema,
  readDocumentPage,
  readDocumentSummaries,
} from '../../shared/records/documents.ts';
import { uuidArray } from '../../shared/core/database.ts';
import { CHUNK_DEFAULTS } from '../../shared/records/chunks.ts';
import { EXAMPLE_IDS } from '../../shared/records/example-ids.ts';
import { taskIds, tasksNotFound } from './lib/tasks.ts';

/**
 * The parent documents of some tasks, a page at a time: one chunk of each document's markdown
 * (documents past 50,000 characters come in chunks) with the tasks of that chunk, as many as the
 * answer's budget holds; a cursor continues with the rest, across tasks and documents.
 */
export default defineTool({
  id: 'get-document-context',
  toolset: 'task-analysis',
  title: 'Get document context',
  annotations: READ_ONLY,
  description:
    'Read the documents holding the given tasks (markdown and tasks), once you have task ids; not to find tasks (semantic-search).',
  get input() {
    return z.strictObject({
      task_ids: taskIds(1, 50),
      // Bounded by the documents named, not by the widest document there can be: a refusal names
      // the chunks these documents have (a data-dependent limit, docs/schemas.md).
      chunk_number: z
        .int()
        .min(1)
        .max(INT4.max)
        .default(1)
        .describe(`Which ${CHUNK_DEFAULTS.chunkSize.toLocaleString('en')}-character chunk to read.`),
      response_format: responseFormatField,
      cursor: cursorField.nullish(),
    });
  },
  get output() {
    return z.object({
      documents: z.array(documentPageShape),
      next_cursor: nextCursorField,
    });
  },
  example: { task_ids: [EXAMPLE_IDS.tasks[0]] },
  async execute({ task_ids, chunk_number, response_format, cursor }, { db, project, links }) {
    const scope = { task_ids, chunk_number, response_format };
    const hint = `Example of a valid call: ${JSON.stringify({ task_ids })}`;
    let from = { document: 0, task: 0 };
    if (cursor) {
      const decoded = decodeCursor(pagePositionSchema, cursor, { scope, hint });
      if (!decoded.ok) return decoded;
      from = decoded.value;
    }

    const { rows } = await db.execute(
      sql`select id, document_id from tasks where project_id = ${project.id} and id = any(${uuidArray(task_ids)})`,
    );
    const documentOf = new Map((rows as { id: string; document_id: string }[]).map((row) => [row.id, row.document_id]));
    const missing = task_ids.filter((id) => !documentOf.has(id));
    if (missing.length > 0) return tasksNotFound(missing);
    // Documents in the order their tasks were asked for.
    const documentIds = [...new Set(task_ids.map((id) => documentOf.get(id)!))];
    // No document has more than MAX_CHUNKS chunks: past that, every document is short of it (and
    // the database is not asked for a chunk whose offset overflows its integers).
    const summaries = await readDocumentSummaries(db, project.id, documentIds, Math.min(chunk_number, MAX_CHUNKS));
    const vanished = documentIds.find((id) => !summaries.has(id));
    if (vanished) return documentDeleted(vanished);
    const documents = documentIds.map((id) => summaries.get(id)!);

    const short = documents.filter((document) => document.layout.totalChunks < chunk_number);
    if (short.length > 0) {
      const fewest = Math.min(...short.map((document) => document.layout.totalChunks));
      const longer = task_ids.filter((id) => !short.some((document) => document.id === documentOf.get(id)));
      const named = short
        .slice(0, 3)
        .map((document) => `'${document.title}' has ${plural(document.layout.totalChunks, 'chunk')}`)
        .join(', ');
      const message = `Field 'chunk_number' must be between 1 and ${fewest} for these tasks' documents, but received ${chunk_number}: ${named}${short.length > 3 ? ` (and ${short.length - 3} more)` : ''}.`;
      return fail('VALIDATION_ERROR', message, {
        hint: `Example of a valid call: ${JSON.stringify(longer.length > 0 ? { task_ids: longer, chunk_number } : { task_ids, chunk_number: fewest })}`,
        details: {
          fields: [
            { field: 'chunk_number', code: 'too_big', message, expected: `between 1 and ${fewest}`, received: String(chunk_number) },
          ],
          total_chunks: Object.fromEntries(documents.map((document) => [document.id, document.layout.totalChunks])),
        },
      });
    }
    const page = await readDocumentPage(db, project.id, documents, { chunk: chunk_number, from, format: response_format });
    if (page.vanished) return documentDeleted(page.vanished);
    const next_cursor = page.next ? encodeCursor(page.next, scope) : null;
    const asked = new Set(task_ids);
    const given = page.entries.reduce((n, entry) => n + entry.tasks.length, 0);
    const otherChunks = page.entries.filter((entry) => entry.task_count > entry.chunk_task_count).length;
    const message =
      `${plural(page.entries.length, 'document')} of ${documents.length} (chunk ${chunk_number}) with ${plural(given, 'task')} of ${page.entries.length === 1 ? 'its' : 'their'} chunk.` +
      (next_cursor
        ? ' The answer was cut to its budget: call again with the same fields and cursor set to next_cursor for the rest.'
        : '') +
      (otherChunks > 0
        ? ` ${plural(otherChunks, 'document')} ${otherChunks === 1 ? 'has' : 'have'} tasks in other chunks: see task_count and pagination.total_chunks.`
        : '');
    return ok({ documents: page.entries, next_cursor }, message, {
      truncated: next_cursor !== null,
      links: linkList(
        page.entries.flatMap((entry) => [
          links.document(entry.document_id, entry.title),
          ...entry.tasks.filter((task) => asked.has(task.task_id)).map((task) => links.task(task.task_id, task.text)),
        ]),
      ),
    });
  },
});

function documentDeleted(documentId: string) {
  return fail('DOCUMENT_DELETED', `Document ${documentId} was deleted during execution.`, {
    hint: 'The document no longer exists; search again (semantic-search) for current tasks. Repeating this call will not bring it back.',
    details: { entity_type: 'document', document_id: documentId },
  });
}
