import { and, eq } from 'drizzle-orm';
import * as z from 'zod';
import { documents } from '../../drizzle/schema.ts';
import { defineTool } from '../../shared/core/tool.ts';
import { providersFromEnv } from '../../shared/providers/index.ts';
import { embedTasks, storeDocument } from './lib/ingest.ts';
import { responseFormatField } from '../../shared/core/budget.ts';
import { EXAMPLE_IDS } from '../../shared/records/example-ids.ts';
import { documentFields, documentId, documentNotFound, ingestOutcome, ingestResult } from './lib/schemas.ts';

/** Replaces a document's title and content; its tasks are extracted and embedded anew. */
export default defineTool({
  id: 'replace-document',
  toolset: 'documents',
  title: 'Replace document',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  description: "Replace a document's title and markdown; its tasks get new ids (the old ones and their relationships go).",
  get input() {
    return z.strictObject({ document_id: documentId, ...documentFields, response_format: responseFormatField });
  },
  get output() {
    return ingestResult;
  },
  providers: providersFromEnv,
  example: { document_id: EXAMPLE_IDS.document, title: 'Q3 hiring plan', content: '- [ ] Open the role' },
  async execute({ document_id, title, content, response_format }, { db, project, providers, signal, idFor, links, progress }) {
    const [existing] = await db
      .select({ id: documents.id })
      .from(documents)
      .where(and(eq(documents.id, document_id), eq(documents.projectId, project.id)));
    if (!existing) {
      return documentNotFound(document_id);
    }
    const { tasks } = await storeDocument(db, project.id, { title, content }, { idFor, replaceId: document_id });
    const report = await embedTasks(db, project.id, tasks, providers.embeddings, signal, progress);
    return ingestOutcome('Replaced', { documentId: document_id, title, tasks }, report, {
      embeddingModel: providers.embeddings.id,
      format: response_format,
      links,
    });
  },
});
