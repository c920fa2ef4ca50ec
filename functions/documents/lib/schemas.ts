/** Input and output pieces shared by the document tools. */
import { z } from 'zod';

/** Documents are at most this many characters (about 1 MiB, the request body limit). */
export const MAX_DOCUMENT_CHARS = 900_000;

export const documentFields = {
  title: z.string().trim().min(1).max(500).describe('The document title, e.g. "Q3 hiring plan".'),
  content: z
    .string()
    .max(MAX_DOCUMENT_CHARS)
    .describe('The document as markdown. Tasks are its checkbox items ("- [ ] Do something"), in order.'),
};

export const documentId = z.uuid().describe('The id of a document of this project (from add-document).');

export const ingestResult = z.object({
  document_id: z.string(),
  title: z.string(),
  task_count: z.int(),
  embedded_count: z.int(),
  failed_count: z.int(),
  embedding_model: z.string(),
  tasks: z.array(z.object({ task_id: z.string(), text: z.string(), position: z.int() })),
});

/** A one-line account of an ingestion, saying what to do about failed embeddings. */
export function ingestMessage(verb: string, title: string, taskCount: number, failed: number, error?: string): string {
  const base = `${verb} "${title}" with ${taskCount} task${taskCount === 1 ? '' : 's'}.`;
  return failed === 0
    ? base
    : `${base} ${failed} task embedding${failed === 1 ? '' : 's'} failed (${error}); call embed-tasks later to retry them.`;
}
