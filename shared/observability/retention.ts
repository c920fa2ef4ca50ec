/**
 * Retention: executions and refusals older than `TRACE_RETENTION_DAYS` are deleted by the
 * gateway's Cron Trigger (GATEWAY_CRON in local/deploy.ts, the `scheduled` handler of
 * shared/runtime/worker.ts), in bounded batches so one run never holds the database for long nor
 * exceeds a Worker's limits. Whatever a run leaves is deleted by the next one.
 */
import { sql } from 'drizzle-orm';
import { fail, type Failure } from '../core/contract.ts';
import type { Database } from '../core/database.ts';
import { log } from '../core/log.ts';

/** The variable retention reads. */
export interface RetentionEnv {
  /** Days an execution (or a refusal) is kept; default 30. */
  TRACE_RETENTION_DAYS?: string;
}

export interface RetentionOptions {
  /** Rows older than this many days are deleted. */
  days?: number;
  /** Rows deleted by one statement. */
  batchSize?: number;
  /** Statements per table in one run; a run stops early when a table has nothing left to delete. */
  maxBatches?: number;
  /** The present, for tests. */
  now?: Date;
}

export const RETENTION_DEFAULTS = { days: 30, batchSize: 5_000, maxBatches: 20 } as const;

export interface RetentionResult {
  /** Rows older than this were deleted. */
  cutoff: string;
  executions: number;
  refusals: number;
  /** False when a table still had expired rows when the run reached `maxBatches`. */
  complete: boolean;
}

/** The retention period from the environment, or CONFIG_ERROR naming a bad value. */
function retentionDaysFromEnv(env: RetentionEnv): number | Failure {
  const raw = env.TRACE_RETENTION_DAYS;
  if (raw === undefined || raw.trim() === '') return RETENTION_DEFAULTS.days;
  const days = Number(raw);
  if (Number.isFinite(days) && days > 0) return days;
  return fail(
    'CONFIG_ERROR',
    `The deployment variable TRACE_RETENTION_DAYS must be a positive number of days, but it is '${raw.slice(0, 60)}'.`,
    {
      details: { reason: 'invalid_variable', variable: 'TRACE_RETENTION_DAYS' },
    },
  );
}

/** Deletes expired executions and refusals, oldest first, in batches of `batchSize`. */
export async function deleteExpired(
  db: Database,
  {
    days = RETENTION_DEFAULTS.days,
    batchSize = RETENTION_DEFAULTS.batchSize,
    maxBatches = RETENTION_DEFAULTS.maxBatches,
    now = new Date(),
  }: RetentionOptions = {},
): Promise<RetentionResult> {
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  const executions = await deleteInBatches(db, 'tool_executions', cutoff, batchSize, maxBatches);
  const refusals = await deleteInBatches(db, 'tool_refusals', cutoff, batchSize, maxBatches);
  return {
    cutoff: cutoff.toISOString(),
    executions: executions.deleted,
    refusals: refusals.deleted,
    complete: executions.complete && refusals.complete,
  };
}

/** The tables retention prunes: an allow-list, so the name below never comes from anywhere else. */
type PrunedTable = 'tool_executions' | 'tool_refusals';

async function deleteInBatches(db: Database, table: PrunedTable, cutoff: Date, batchSize: number, maxBatches: number) {
  const name = sql.identifier(table);
  let deleted = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    // The oldest rows first, through the created_at index; ids picked then deleted in one statement.
    const result = await db.execute(sql`
      delete from ${name} where id in (
        select id from ${name} where created_at < ${cutoff.toISOString()}::timestamptz order by created_at limit ${batchSize}
      )`);
    const count = result.rowCount ?? 0;
    deleted += count;
    if (count < batchSize) return { deleted, complete: true };
  }
  return { deleted, complete: false };
}

/** One retention run from the worker's variables, as the Cron Trigger runs it. Never rejects. */
export async function runRetention(
  db: Database,
  env: RetentionEnv,
  options: Omit<RetentionOptions, 'days'> = {},
): Promise<RetentionResult | Failure> {
  const days = retentionDaysFromEnv(env);
  if (typeof days !== 'number') {
    log('error', 'retention_skipped', { reason: days.error.message });
    return days;
  }
  try {
    const result = await deleteExpired(db, { ...options, days });
    log('info', 'retention', { days, ...result });
    return result;
  } catch (error) {
    log('error', 'retention_failed', { error: error instanceof Error ? error.message : String(error) });
    return fail('DATABASE_ERROR', 'Retention could not delete expired executions; the next run will try again.', { cause: error });
  }
}
