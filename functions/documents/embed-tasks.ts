import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { ok } from '../../shared/core/contract.ts';
import { defineTool } from '../../shared/core/tool.ts';
import { providersFromEnv } from '../../shared/providers/index.ts';
import { embedTasks } from './lib/ingest.ts';
import { plural } from '../../shared/core/plural.ts';
import { documentId, documentNotFound } from './lib/schemas.ts';

/** Tasks embedded per call at most: a large backlog is worked off over several calls. */
const MAX_TASKS_PER_CALL = 1_000;

/**
 * Embeds the tasks that search cannot use yet: pending, failed (after a provider outage), or
 * embedded by another model than the configured one (after a change of provider or model, or of
 * the offline embedder's version): vectors of different models are never compared.
 */
export default defineTool({
  id: 'embed-tasks',
  toolset: 'documents',
  title: 'Embed tasks',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  description:
    'Embed tasks whose embedding is pending, failed or from another model (when semantic-search reports unsearchable tasks). Call again while remaining_count > 0.',
  get input() {
    return z.strictObject({ document_id: documentId.nullish().describe("Only this document's tasks; null for all.") });
  },
  get output() {
    return z.object({ embedded_count: z.int(), failed_count: z.int(), remaining_count: z.int(), embedding_model: z.string() });
  },
  example: {},
  providers: providersFromEnv,
  async execute({ document_id }, { db, project, providers, signal, links, progress }) {
    let document: { id: string; title: string } | undefined;
    if (document_id) {
      const { rows } = await db.execute(sql`select id, title from documents where id = ${document_id} and project_id = ${project.id}`);
      document = rows[0] as { id: string; title: string } | undefined;
      if (!document) return documentNotFound(document_id);
    }
    const onlyDocument = document_id ? sql`and document_id = ${document_id}` : sql``;
    const model = providers.embeddings.id;
    const waiting = sql`project_id = ${project.id} and (embedding_status in ('pending', 'failed') or embedding_model is distinct from ${model}) ${onlyDocument}`;
    const { rows } = await db.execute(
      sql`select id, text from tasks where ${waiting} order by document_id, position limit ${MAX_TASKS_PER_CALL}`,
    );
    const tasks = rows as { id: string; text: string }[];
    const report = await embedTasks(db, project.id, tasks, providers.embeddings, signal, progress);
    const { rows: left } = await db.execute(sql`select count(*)::int as remaining from tasks where ${waiting}`);
    const remaining = (left[0] as { remaining: number }).remaining;
    return ok(
      { embedded_count: report.embedded, failed_count: report.failed, remaining_count: remaining, embedding_model: model },
      tasks.length === 0
        ? `Every task${document ? ` of "${document.title}"` : ''} is already embedded with ${model}.`
        : `Embedded ${report.embedded} of ${plural(tasks.length, 'task')} with ${model}${report.failed ? `; ${report.failed} failed (${report.error})` : ''}` +
            `${remaining ? `; ${remaining} remain: call embed-tasks again` : ''}.`,
      document ? { links: [links.document(document.id, document.title)] } : {},
    );
  },
});
