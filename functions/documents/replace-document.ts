import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import { documents } from '../../drizzle/schema.ts';
import { defineTool } from '../../shared/core/tool.ts';
import { embedTasks, storeDocument } from './lib/ingest.ts';
import { documentFields, documentId, documentNotFound, ingestOutcome, ingestResult } from './lib/schemas.ts';

/** Replaces a document's title and content; its tasks are extracted and embedded anew. */
export default defineTool({
  id: 'replace-document',
  title: 'Replace document',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  description:
    "Replace a document's title and markdown. Its tasks are extracted again (new task ids); the old tasks and their relationships are removed.",
  input: z.strictObject({ document_id: documentId, ...documentFields }),
  output: ingestResult,
  example: { document_id: '3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f', title: 'Q3 hiring plan', content: '- [ ] Open the role' },
  async execute({ document_id, title, content }, { db, project, providers, signal, idFor }) {
    const [existing] = await db
      .select({ id: documents.id })
      .from(documents)
      .where(and(eq(documents.id, document_id), eq(documents.projectId, project.id)));
    if (!existing) {
      return documentNotFound(document_id);
    }
    const { tasks } = await storeDocument(db, project.id, { title, content }, { idFor, replaceId: document_id });
    const report = await embedTasks(db, project.id, tasks, providers.embeddings, signal);
    return ingestOutcome('Replaced', { documentId: document_id, title, tasks }, report, providers.embeddings.id);
  },
});
