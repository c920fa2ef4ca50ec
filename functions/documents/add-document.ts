import { z } from 'zod';
import { ok } from '../../shared/contract.ts';
import { defineTool } from '../../shared/tool.ts';
import { embedTasks, storeDocument } from './lib/ingest.ts';
import { documentFields, ingestMessage, ingestResult } from './lib/schemas.ts';

/** Stores a markdown document, extracts its checkbox tasks and embeds them for search. */
export default defineTool({
  id: 'add-document',
  description:
    'Add a markdown document. Its checkbox items ("- [ ] ...") become tasks that the task-analysis tools can search, cluster and link. Returns the document id and its tasks.',
  input: z.strictObject(documentFields),
  output: ingestResult,
  example: { title: 'Q3 hiring plan', content: '# Hiring\n- [ ] Open the senior backend engineer role\n- [ ] Interview candidates after the role is open' },
  async execute({ title, content }, { db, project, providers, signal }) {
    const { documentId, tasks } = await storeDocument(db, project.id, { title, content });
    const report = await embedTasks(db, project.id, tasks, providers.embeddings, signal);
    return ok(
      {
        document_id: documentId,
        title,
        task_count: tasks.length,
        embedded_count: report.embedded,
        failed_count: report.failed,
        embedding_model: providers.embeddings.id,
        tasks: tasks.map((task) => ({ task_id: task.id, text: task.text, position: task.position })),
      },
      ingestMessage('Added', title, tasks.length, report.failed, report.error),
    );
  },
});
