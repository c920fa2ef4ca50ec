/** Input and output pieces shared by the document tools. */
import * as z from 'zod';
import { ANSWER_BUDGETS, fitToBudget, type ResponseFormat } from '../../../shared/core/budget.ts';
import { notFound, ok, type Failure, type Success } from '../../../shared/core/contract.ts';
import { text, uuid } from '../../../shared/core/fields.ts';
import type { Links } from '../../../shared/core/links.ts';
import { plural } from '../../../shared/core/plural.ts';
import { MAX_DOCUMENT_CHARS } from '../../../shared/records/documents.ts';
import type { EmbeddingReport, StoredTask } from './ingest.ts';

export const documentFields = {
  title: text({ max: 500, blank: false }),
  content: text({ max: MAX_DOCUMENT_CHARS }).describe('Markdown.'),
};

export const documentId = uuid();

/** NOT_FOUND for a document id the project does not have, on every document tool. */
export function documentNotFound(document_id: string): Failure {
  return notFound(
    'document',
    { document_id },
    'Use the document_id that add-document returned, or find documents through semantic-search results.',
  );
}

export const ingestResult = z.object({
  document_id: z.string(),
  title: z.string(),
  task_count: z.int(),
  embedded_count: z.int(),
  failed_count: z.int(),
  embedding_model: z.string(),
  tasks: z
    .array(
      z.object({
        task_id: z.string(),
        text: z.string(),
        position: z.int().optional().describe("detailed only: the task's order in the document, from 0."),
        content_offset: z.int().optional().describe("detailed only: where the task's line starts in the document, in characters."),
      }),
    )
    .describe(
      'The first tasks, in document order, as many as the answer budget holds (task_count says how many there are; read the rest with get-document-context or the document link).',
    ),
});

/**
 * The answer of add-document and replace-document: the document, its first tasks within the budget
 * of `format`, a link to the document, and what to do about failed embeddings.
 */
export function ingestOutcome(
  verb: 'Added' | 'Replaced',
  stored: { documentId: string; title: string; tasks: StoredTask[] },
  report: EmbeddingReport,
  { embeddingModel, format, links }: { embeddingModel: string; format: ResponseFormat; links: Links },
): Success<z.output<typeof ingestResult>> {
  const { documentId, title, tasks } = stored;
  const listed = fitToBudget(
    tasks.map((task) => ({
      task_id: task.id,
      text: task.text,
      ...(format === 'detailed' ? { position: task.position, content_offset: task.offset } : {}),
    })),
    ANSWER_BUDGETS[format].list,
    { atLeast: 0 },
  );
  const base = `${verb} "${title}" with ${plural(tasks.length, 'task')}.`;
  const message =
    (report.failed === 0
      ? base
      : `${base} ${plural(report.failed, 'task embedding')} failed (${report.error}); call embed-tasks later to retry them.`) +
    (listed.length < tasks.length
      ? ` The first ${listed.length} are listed; read them all with get-document-context (task_ids: [the first task id], then cursor) or at the document's link.`
      : '');
  return ok(
    {
      document_id: documentId,
      title,
      task_count: tasks.length,
      embedded_count: report.embedded,
      failed_count: report.failed,
      embedding_model: embeddingModel,
      tasks: listed,
    },
    message,
    { truncated: listed.length < tasks.length, links: [links.document(documentId, title)] },
  );
}
