/**
 * Write receipts (`write_receipts`): what a write did, for the writes a retry cannot read back from
 * the rows themselves. A delete leaves no row behind; an overwrite loses the value it replaced.
 * The receipt is written in the same statement as the write, under an id derived from the call
 * (`context.idFor`), so it exists exactly when the write committed. A retried attempt of the call
 * (its first answer lost) finds nothing left to do, reads the receipt, and answers what its earlier
 * attempt did: what it deleted instead of NOT_FOUND, the status it replaced instead of "nothing
 * changed". Receipts older than a day are purged with expired idempotency keys
 * (`purgeExpired` in shared/runtime/idempotency.ts).
 *
 * @example
 * const receipt = { id: await idFor('receipt'), projectId: project.id };
 * const { rows } = await db.execute(sql`
 *   with gone as (delete from notes where project_id = ${project.id} and id = ${noteId} returning id),
 *   receipt as (${recordReceipt(receipt, sql`jsonb_build_object('note_id', id)`, sql`gone`)})
 *   select exists (select 1 from gone) as deleted_now, ${receiptResult(receipt)} is not null as deleted_before`);
 */
import { sql, type SQL } from 'drizzle-orm';

/** Where a call's receipt is kept: an id from `context.idFor(purpose)`, and the caller's project. */
export interface Receipt {
  id: string;
  projectId: string;
}

/**
 * An INSERT recording `result` (a jsonb expression over `source`) as the receipt, when `source`
 * (a FROM clause, with its WHERE or HAVING) yields a row; it must yield at most one. Use it as a
 * CTE of the statement that writes, so that the receipt commits with the write. Written again by
 * a later write of the same call, the receipt holds that write's result.
 */
export function recordReceipt(receipt: Receipt, result: SQL, source: SQL): SQL {
  return sql`insert into write_receipts as r (id, project_id, result)
    select ${receipt.id}::uuid, ${receipt.projectId}::uuid, ${result} from ${source}
    on conflict (id) do update set result = excluded.result, created_at = now() where r.project_id = excluded.project_id`;
}

/**
 * The receipt's `result` (jsonb), or null when there is none, as the statement sees it: in the
 * statement that records it, that is the receipt of an earlier attempt of the call; in a later
 * statement of the same transaction, the receipt just recorded.
 */
export function receiptResult(receipt: Receipt): SQL {
  return sql`(select result from write_receipts where id = ${receipt.id}::uuid and project_id = ${receipt.projectId}::uuid)`;
}
