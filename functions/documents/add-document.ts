import * as z from 'zod';
import { responseFormatField } from '../../shared/core/budget.ts';
import { defineTool } from '../../shared/core/tool.ts';
import { providersFromEnv } from '../../shared/providers/index.ts';
import { embedTasks, storeDocument } from './lib/ingest.ts';
import { documentFields, ingestOutcome, ingestResult } from './lib/schemas.ts';

/** Stores a markdown document, extracts its checkbox tasks and embeds them for search. */
export default defineTool({
  id: 'add-document',
  toolset: 'documents',
  title: 'Add document',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  description:
    'Add a markdown document; its checkbox items (- [ ] ...) become tasks. To change one, use replace-document (adding it again makes a copy).',
  get input() {
    return z.strictObject({ ...documentFields, response_format: responseFormatField });
  },
  get output() {
    return ingestResult;
  },
  example: {
    title: 'Q3 hiring plan',
    content: '# Hiring\n- [ ] Open the senior backend engineer role\n- [ ] Interview candidates after the role is open',
  },
  providers: providersFromEnv,
  async execute({ title, content, response_format }, { db, project, providers, signal, idFor, links, progress }) {
    const { documentId, tasks } = await storeDocument(db, project.id, { title, content }, { idFor });
    const report = await embedTasks(db, project.id, tasks, providers.embeddings, signal, progress);
    return ingestOutcome('Added', { documentId, title, tasks }, report, {
      embeddingModel: providers.embeddings.id,
      format: response_format,
      links,
    });
  },
});
