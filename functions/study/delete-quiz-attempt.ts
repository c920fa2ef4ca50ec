import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { ok } from '../../shared/core/contract.ts';
import { defineTool } from '../../shared/core/tool.ts';
import { recordId } from './lib/fields.ts';
import { notFound } from './lib/lookup.ts';
import { deleteAttempts } from './lib/quiz.ts';

/** Deletes one quiz attempt. */
export default defineTool({
  id: 'delete-quiz-attempt',
  toolset: 'study',
  title: 'Delete a quiz attempt',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  description:
    'Delete one quiz attempt for good, e.g. one saved by mistake. To clear questions now answered correctly, use quiz-post-save.',
  get input() {
    return z.strictObject({ attempt_id: recordId() });
  },
  get output() {
    return z.object({ deleted_attempt_id: z.int() });
  },
  example: { attempt_id: 6 },
  async execute({ attempt_id }, { db, project, idFor }) {
    // The receipt lets a retried attempt of this call recognise the deletion its first attempt made.
    const { rows } = await db.execute(deleteAttempts({ id: await idFor('delete'), projectId: project.id }, sql`a.id = ${attempt_id}`));
    const { deleted, deleted_before } = rows[0] as { deleted: number[]; deleted_before: number[] };
    if (deleted.length === 0 && deleted_before.length === 0) {
      return notFound(
        'quiz_attempt',
        { attempt_id },
        `No quiz attempt with id ${attempt_id} exists in this project; nothing was deleted.`,
        'Ask the user which attempt they mean; get-wrong-questions lists the wrong attempts of a topic with their ids.',
      );
    }
    return ok({ deleted_attempt_id: attempt_id }, `Deleted quiz attempt ${attempt_id}.`);
  },
});
