/** Setting the status of a plan or a plan item, so that a retried call answers what it changed. */
import { sql } from 'drizzle-orm';
import type { Database } from '../../../shared/core/database.ts';
import { receiptResult, recordReceipt, type Receipt } from '../../../shared/records/receipts.ts';

/** The tables whose rows have a status, by the record they hold (an allow-list of identifiers). */
const TABLES = { plan: sql`study_plans`, item: sql`study_plan_items` } as const;

/** What setting a status did. */
export interface StatusChange<S extends string> {
  /** The status the record had before this call. */
  previous: S;
  /** False when it already had the status asked for. */
  changed: boolean;
}

/**
 * Sets the status of the project's plan or plan item `id`, in one statement that changes it only
 * if it differs, and keeps the status it replaced as the call's receipt. A retried attempt of a
 * call whose change committed (its answer lost) finds the status already set, and its receipt:
 * it answers that it changed it from the previous status, not that nothing changed.
 */
export async function setStatus<S extends string>(
  db: Database,
  receipt: Receipt,
  record: keyof typeof TABLES,
  id: number,
  status: S,
): Promise<StatusChange<S>> {
  const table = TABLES[record];
  const { rows } = await db.execute(sql`
    with target as (select id, status from ${table} where project_id = ${receipt.projectId} and id = ${id} for update),
    changed as (
      update ${table} t set status = ${status}, updated_at = now() from target
      where t.project_id = ${receipt.projectId} and t.id = target.id and target.status <> ${status}
      returning target.status as previous),
    receipt as (${recordReceipt(receipt, sql`jsonb_build_object('previous_status', previous)`, sql`changed`)})
    select (select previous from changed) as changed_now, ${receiptResult(receipt)}->>'previous_status' as changed_before`);
  const { changed_now, changed_before } = rows[0] as { changed_now: S | null; changed_before: S | null };
  const previous = changed_now ?? changed_before;
  return previous === null ? { previous: status, changed: false } : { previous, changed: true };
}
