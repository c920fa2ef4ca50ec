/**
 * Read routes for records, where links point by default: `GET /documents/:id` (one chunk of the
 * document with a page of its tasks, bounded like get-document-context) and `GET /tasks/:id`.
 * The same API keys as the tools and the tenant from the key: another project's record is
 * NOT_FOUND, exactly like one that never existed. Answered with the envelope. They read only and
 * are not tool executions: no execution slot is taken and no trace row is written.
 */
import { z } from 'zod';
import { responseFormatField } from '../core/budget.ts';
import { fail, notFound, ok, type Meta, type Outcome } from '../core/contract.ts';
import { cursorField, decodeCursor, encodeCursor, nextCursorField } from '../core/cursor.ts';
import { linkList, type Links } from '../core/links.ts';
import { plural } from '../core/plural.ts';
import { uuidField, validateInput } from '../core/validation.ts';
import { documentPageShape, pagePositionSchema, readDocumentPage, readDocumentSummaries } from '../records/documents.ts';
import { readTaskRecord, taskRecordShape } from '../records/tasks.ts';
import type { Database } from '../runtime/db.ts';
import { databaseFailure } from '../runtime/db.ts';
import type { Env } from '../runtime/env.ts';
import { linksFromEnv } from '../runtime/links.ts';
import { authorize, respond, unexpected } from '../runtime/pipeline.ts';

/** `data` of `GET /documents/:id`. */
export const documentRecordData = z.object({ document: documentPageShape, next_cursor: nextCursorField });
/** `data` of `GET /tasks/:id`. */
export const taskRecordData = z.object({ task: taskRecordShape });

const idParam = z.strictObject({ id: uuidField().describe('The id of the record.') });

/** The query parameters of `GET /documents/:id`. */
export const documentQuery = z.strictObject({
  chunk: z.coerce.number().int().min(1).default(1).describe('Which chunk of a long document, from 1 (default 1).'),
  cursor: cursorField.optional(),
  format: responseFormatField,
});

/** The query parameters of `GET /tasks/:id`. */
export const taskQuery = z.strictObject({ format: responseFormatField });

const DOCUMENT_HINT = 'Example: GET /documents/3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f?chunk=1 with Authorization: Bearer <api key>.';
const TASK_HINT = 'Example: GET /tasks/9a1c2e3f-4b5d-4e6f-8a7b-0c1d2e3f4a5b with Authorization: Bearer <api key>.';

/** `GET /documents/:id`: a chunk of the document and a page of that chunk's tasks. */
export function documentRoute(request: Request, env: Env, id: string): Promise<Response> {
  return readRecord(request, env, id, 'document', documentQuery, DOCUMENT_HINT, async ({ db, projectId, id, query, links }) => {
    const { chunk, cursor, format } = query;
    const scope = { id, chunk, format };
    let from = { document: 0, task: 0 };
    if (cursor) {
      const decoded = decodeCursor(pagePositionSchema, cursor, { scope, hint: DOCUMENT_HINT });
      if (!decoded.ok) return decoded;
      from = decoded.value;
    }
    const summary = (await readDocumentSummaries(db, projectId, [id], chunk)).get(id);
    if (!summary) return notFound('document', { document_id: id });
    const chunks = summary.layout.totalChunks;
    if (chunk > chunks) {
      const message = `Query parameter 'chunk' must be between 1 and ${chunks} for this document (it has ${plural(chunks, 'chunk')}), but received ${chunk}.`;
      return fail('VALIDATION_ERROR', message, {
        hint: `GET /documents/${id}?chunk=${chunks}`,
        details: { fields: [{ field: 'chunk', code: 'too_big', message, expected: `between 1 and ${chunks}`, received: String(chunk) }] },
      });
    }
    const page = await readDocumentPage(db, projectId, [summary], { chunk, from, format });
    const document = page.entries[0];
    if (page.vanished || !document) return notFound('document', { document_id: id });
    const next_cursor = page.next ? encodeCursor(page.next, scope) : null;
    const base = new URL(request.url);
    const pageLink = (parameters: Record<string, string>) => `${base.origin}${base.pathname}?${new URLSearchParams({ chunk: String(chunk), format, ...parameters })}`;
    return ok(
      { document, next_cursor },
      `"${document.title}", chunk ${chunk} of ${chunks}, with ${plural(document.tasks.length, 'task')} of the chunk's ${document.chunk_task_count}.` +
        (next_cursor ? ' More tasks: repeat the request with cursor=<next_cursor>.' : ''),
      {
        truncated: next_cursor !== null,
        links: linkList([
          links.document(id, document.title),
          next_cursor ? { label: 'Next page of tasks', url: pageLink({ cursor: next_cursor }) } : undefined,
          chunk < chunks ? { label: `Chunk ${chunk + 1} of ${chunks}`, url: pageLink({ chunk: String(chunk + 1) }) } : undefined,
          ...document.tasks.slice(0, 5).map((task) => links.task(task.task_id, task.text)),
        ]),
      },
    );
  });
}

/** `GET /tasks/:id`: the task, its document and its relationship counts. */
export function taskRoute(request: Request, env: Env, id: string): Promise<Response> {
  return readRecord(request, env, id, 'task', taskQuery, TASK_HINT, async ({ db, projectId, id, query, links }) => {
    const task = await readTaskRecord(db, projectId, id, query.format === 'detailed');
    if (!task) return notFound('task', { task_id: id });
    return ok({ task }, `Task ${task.position + 1} of "${task.document_title}", in chunk ${task.chunk_number} of the document.`, {
      links: linkList([links.task(id, task.text), links.document(task.document_id, task.document_title)]),
    });
  });
}

interface RecordRead<Q> {
  db: Database;
  projectId: string;
  id: string;
  query: Q;
  links: Links;
}

/**
 * Authenticates, validates the id and the query parameters, builds the links, runs `read`, and
 * answers with the envelope. Never throws.
 */
async function readRecord<S extends z.ZodType>(
  request: Request,
  env: Env,
  rawId: string,
  entity: 'document' | 'task',
  querySchema: S,
  hint: string,
  read: (input: RecordRead<z.output<S>>) => Promise<Outcome<unknown>>,
): Promise<Response> {
  const traceId = crypto.randomUUID();
  const startedAt = performance.now();
  const meta = (attempts: number): Meta => ({
    tool: `GET /${entity}s/:id`,
    trace_id: traceId,
    duration_ms: Math.round((performance.now() - startedAt) * 100) / 100,
    attempts,
    queued_ms: 0,
    performance_warning: false,
  });
  const caller = await authorize(request.headers.get('authorization'), env, traceId);
  if (!caller.ok) {
    const response = respond(caller, meta(0));
    if (caller.error.code === 'UNAUTHENTICATED') response.headers.set('www-authenticate', 'Bearer realm="edge-tools"');
    return response;
  }
  const url = new URL(request.url);
  const id = validateInput(idParam, { id: rawId }, hint);
  if (!id.ok) return respond(id, meta(0));
  const query = validateInput(querySchema, Object.fromEntries(url.searchParams), hint);
  if (!query.ok) return respond(query, meta(0));
  const links = linksFromEnv(env, url.origin);
  if (!links.ok) return respond(links, meta(0));
  let outcome: Outcome<unknown>;
  try {
    outcome = await read({ db: caller.db, projectId: caller.project.id, id: id.value.id, query: query.value, links: links.links });
  } catch (error) {
    outcome = databaseFailure(error) ?? unexpected(error, traceId);
  }
  return respond(outcome, meta(1));
}
