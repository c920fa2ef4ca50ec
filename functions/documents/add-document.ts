import { z } from 'zod';
import { defineTool } from '../../shared/core/tool.ts';
import { embedTasks, storeDocument } from './lib/ingest.ts';
import { documentFields, ingestOutcome, ingestResult } from './lib/schemas.ts';

/** Stores a markdown document, extracts its checkbox tasks and embeds them for search. */
export default defineTool({
  id: 'add-document',
  title: 'Add document',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  description:
    'Add a markdown document. Its checkbox items ("- [ ] ...") become tasks that the task-analysis tools can search, cluster and link. Returns the document id and its tasks.',
  input: z.strictObject(documentFields),
  output: ingestResult,
  example: { title: 'Q3 hiring plan', content: '# Hiring\n- [ ] Open the senior backend engineer role\n- [ ] Interview candidates after the role is open' },
  async execute({ title, content }, { db, project, providers, signal, idFor }) {
    const { documentId, tasks } = await storeDocument(db, project.id, { title, content }, { idFor });
    const report = await embedTasks(db, project.id, tasks, providers.embeddings, signal);
    return ingestOutcome('Added', { documentId, title, tasks }, report, providers.embeddings.id);
  },
});
