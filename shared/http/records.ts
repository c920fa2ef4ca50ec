/**
 * Read routes for records, where links point by default: `GET /documents/:id` (one chunk of the
 * document with a page of its tasks, bounded like get-document-context) and `GET /tasks/:id`.
 * The same API keys as the tools and the tenant from the key: another project's record is
 * NOT_FOUND, exactly like one that never existed. Answered with the envelope; they read only and
 * are not tool executions (no execution slot, no trace row). Documents belong to the documents
 * toolset, tasks to documents and task-analysis: a key limited to other toolsets reads neither.
 */
import { Hono } from 'hono/tiny';
import * as z from 'zod';
import { responseFormatField } from '../core/budget.ts';
import { fail, notFound, ok, type Outcome } from '../core/contract.ts';
import { cursorField, decodeCursor, encodeCursor, nextCursorField } from '../core/cursor.ts';
import { linkList } from '../core/links.ts';
import { plural } from '../core/plural.ts';
import { uuid } from '../core/fields.ts';
import { validateInput } from '../core/validation.ts';
import {
  chunkNumber,
  documentPageShape,
  MAX_CHUNKS,
  pagePositionSchema,
  readDocumentPage,
  readDocumentSummaries,
} from '../records/documents.ts';
import { EXAMPLE_IDS } from '../records/example-ids.ts';
import { readTaskRecord, taskRecordShape } from '../records/tasks.ts';
import type { Env } from '../runtime/env.ts';
import { linksFromEnv } from '../runtime/link-templates.ts';
import type { Caller } from '../auth/caller.ts';
import type { Database } from '../core/database.ts';
import { authenticated, readQuery, type ReadRouteOptions } from './read-route.ts';

/** `data` of `GET /documents/:id`. */
export const documentRecordData = z.object({ document: documentPageShape, next_cursor: nextCursorField });
/** `data` of `GET /tasks/:id`. */
export const taskRecordData = z.object({ task: taskRecordShape });

/** The query parameters of `GET /documents/:id`. */
export const documentQuery = z.strictObject({
  chunk: chunkNumber().describe(`Which chunk of a long document, from 1 (default 1) to at most ${MAX_CHUNKS}.`),
  cursor: cursorField.optional(),
  response_format: responseFormatField,
});

/** The query parameters of `GET /tasks/:id`. */
export const taskQuery = z.strictObject({ response_format: responseFormatField });

const idParam = z.strictObject({ id: uuid().describe('The id of the record.') });

const DOCUMENT_HINT = `Example of a valid call: GET /documents/${EXAMPLE_IDS.document}?chunk=1`;
const TASK_HINT = `Example of a valid call: GET /tasks/${EXAMPLE_IDS.tasks[0]}`;

/** The record routes, mounted by every worker (shared/http/app.ts, tool-app.ts): links must lead somewhere on each. */
export function recordRoutes(options: Omit<ReadRouteOptions, 'toolsets'>) {
  return new Hono<{ Bindings: Env }>()
    .get('/documents/:id', (c) =>
      authenticated(
        c,
        'documents',
        (db, caller) => {
          const query = readQuery(c.req.url, documentQuery, ['chunk'], DOCUMENT_HINT);
          return query.ok ? readDocument(c.req.url, c.env, db, caller, c.req.param('id'), query.value) : Promise.resolve(query);
        },
        { ...options, toolsets: ['documents'] },
      ),
    )
    .get('/tasks/:id', (c) =>
      authenticated(
        c,
        'tasks',
        (db, caller) => {
          const query = readQuery(c.req.url, taskQuery, [], TASK_HINT);
          return query.ok ? readTask(c.req.url, c.env, db, caller, c.req.param('id'), query.value) : Promise.resolve(query);
        },
        { ...options, toolsets: ['documents', 'task-analysis'] },
      ),
    );
}

/** A chunk of the document and a page of that chunk's tasks, with links to it, its next page and its next chunk. */
async function readDocument(
  url: string,
  env: Env,
  db: Database,
  { project }: Caller,
  rawId: string,
  query: z.output<typeof documentQuery>,
): Promise<Outcome<unknown>> {
  const id = validateInput(idParam, { id: rawId }, DOCUMENT_HINT);
  if (!id.ok) return id;
  const links = linksFromEnv(env, new URL(url).origin, project.id);
  if (!links.ok) return links;
  const documentId = id.value.id;
  const { chunk, cursor, response_format } = query;
  const scope = { id: documentId, chunk, response_format };
  let from = { document: 0, task: 0 };
  if (cursor) {
    const decoded = decodeCursor(pagePositionSchema, cursor, { scope, hint: DOCUMENT_HINT });
    if (!decoded.ok) return decoded;
    from = decoded.value;
  }
  const summary = (await readDocumentSummaries(db, project.id, [documentId], chunk)).get(documentId);
  if (!summary) return notFound('document', { document_id: documentId });
  const chunks = summary.layout.totalChunks;
  if (chunk > chunks) {
    const message = `Query parameter 'chunk' must be between 1 and ${chunks} for this document (it has ${plural(chunks, 'chunk')}), but received ${chunk}.`;
    return fail('VALIDATION_ERROR', message, {
      hint: `Example of a valid call: GET /documents/${documentId}?chunk=${chunks}`,
      details: { fields: [{ field: 'chunk', code: 'too_big', message, expected: `between 1 and ${chunks}`, received: String(chunk) }] },
    });
  }
  const page = await readDocumentPage(db, project.id, [summary], { chunk, from, format: response_format });
  const document = page.entries[0];
  if (page.vanished || !document) return notFound('document', { document_id: documentId });
  const next_cursor = page.next ? encodeCursor(page.next, scope) : null;
  const self = new URL(url);
  const pageLink = (parameters: Record<string, string>) =>
    `${self.origin}${self.pathname}?${new URLSearchParams({ chunk: String(chunk), response_format, ...parameters })}`;
  return ok(
    { document, next_cursor },
    `"${document.title}", chunk ${chunk} of ${chunks}, with ${plural(document.tasks.length, 'task')} of the chunk's ${document.chunk_task_count}.` +
      (next_cursor ? ' More tasks: repeat the request with cursor=<next_cursor> (the link "Next page of tasks").' : ''),
    {
      truncated: next_cursor !== null,
      links: linkList([
        links.links.document(documentId, document.title),
        next_cursor ? { label: 'Next page of tasks', url: pageLink({ cursor: next_cursor }) } : undefined,
        chunk < chunks ? { label: `Chunk ${chunk + 1} of ${chunks}`, url: pageLink({ chunk: String(chunk + 1) }) } : undefined,
        ...document.tasks.slice(0, 5).map((task) => links.links.task(task.task_id, task.text)),
      ]),
    },
  );
}

/** The task, its document and its relationship counts, with links to both. */
async function readTask(
  url: string,
  env: Env,
  db: Database,
  { project }: Caller,
  rawId: string,
  query: z.output<typeof taskQuery>,
): Promise<Outcome<unknown>> {
  const id = validateInput(idParam, { id: rawId }, TASK_HINT);
  if (!id.ok) return id;
  const links = linksFromEnv(env, new URL(url).origin, project.id);
  if (!links.ok) return links;
  const task = await readTaskRecord(db, project.id, id.value.id, query.response_format === 'detailed');
  if (!task) return notFound('task', { task_id: id.value.id });
  return ok({ task }, `Task ${task.position + 1} of "${task.document_title}", in chunk ${task.chunk_number} of the document.`, {
    links: linkList([links.links.task(task.task_id, task.text), links.links.document(task.document_id, task.document_title)]),
  });
}
