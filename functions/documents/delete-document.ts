import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { ok } from '../../shared/core/contract.ts';
import { defineTool } from '../../shared/core/tool.ts';
import { plural } from '../../shared/core/plural.ts';
import { receiptResult, recordReceipt } from '../../shared/records/receipts.ts';
import { EXAMPLE_IDS } from '../../shared/records/example-ids.ts';
import { documentId, documentNotFound } from './lib/schemas.ts';

/** Deletes a document with its tasks and their relationships. */
export default defineTool({
  id: 'delete-document',
  toolset: 'documents',
  title: 'Delete document',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Delete a document with its tasks and their relationships; to change it, use replace-document.',
  get input() {
    return z.strictObject({ document_id: documentId });
  },
  get output() {
    return z.object({ document_id: z.string(), deleted_task_count: z.int() });
  },
  example: { document_id: EXAMPLE_IDS.document },
  async execute({ document_id }, { db, project, idFor }) {
    const receipt = { id: await idFor('receipt'), projectId: project.id };
    // One statement: the count sees the tasks as they were just before the cascade removed them, and
    // the receipt is written with the delete. A retry whose first attempt committed (its answer lost)
    // deletes nothing but finds its own receipt, which the statement reads as it was before.
    const { rows } = await db.execute(sql`
      with gone as (delete from documents where id = ${document_id} and project_id = ${project.id} returning id),
      counted as (
        select (select count(*) from gone)::int as deleted,
               (select count(*) from tasks where document_id in (select id from gone))::int as task_count),
      receipt as (${recordReceipt(receipt, sql`jsonb_build_object('deleted_task_count', task_count)`, sql`counted where deleted > 0`)})
      select deleted, task_count, (${receiptResult(receipt)}->>'deleted_task_count')::int as earlier_task_count
      from counted`);
    const { deleted, task_count, earlier_task_count } = rows[0] as {
      deleted: number;
      task_count: number;
      earlier_task_count: number | null;
    };
    const deletedTaskCount = deleted > 0 ? task_count : earlier_task_count;
    if (deletedTaskCount === null) {
      return documentNotFound(document_id);
    }
    return ok(
      { document_id, deleted_task_count: deletedTaskCount },
      `Deleted document ${document_id} with its ${plural(deletedTaskCount, 'task')} and their relationships.`,
    );
  },
});
