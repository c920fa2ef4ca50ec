/**
 * Cumulative counters of every call, the source of the Prometheus exposition
 * (shared/observability/prometheus.ts). They live in Postgres (`tool_counters`), added to in the
 * same statement batch (one transaction) that writes the execution or the refusal, so every
 * isolate answers the same totals, a scrape never sees them go down, and retention, which deletes
 * old executions, leaves them alone.
 *
 * Durations and queue waits are histograms: each observation adds 1 to the row of its bucket (the
 * smallest bound at or above it) and its value to a `_sum` row; the exposition accumulates the
 * buckets and derives `_count`.
 */
import { eq, sql } from 'drizzle-orm';
import { projects, toolCounters } from '../../drizzle/schema.ts';
import type { Database } from '../core/database.ts';

/**
 * Bounds of the execution duration histogram, in seconds: calls on a warm database take a few
 * to a few tens of milliseconds, embedding and clustering calls up to seconds, the slow-call
 * threshold is 5 s, and a long document's ingestion tens of seconds.
 */
export const DURATION_BUCKETS = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 60] as const;

/**
 * Bounds of the queue wait histogram, in seconds: most calls get a slot at once (0), a busy
 * gateway makes calls wait for others to finish (tens of milliseconds to seconds), and a call that
 * waits 10 s (the default queue timeout) is answered BUSY instead.
 */
export const QUEUE_WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** How a call ended: executed successfully, executed and failed, or refused before executing. */
export type CallOutcome = 'success' | 'failure' | 'refused';

/** The series a counter row belongs to. */
export type CounterName =
  'calls' | 'duration_bucket' | 'duration_sum' | 'queue_wait_bucket' | 'queue_wait_sum' | 'retries' | 'slow_calls' | 'lease_warnings';

/** One counter row: what a call adds to it, or (read back) its total. */
export interface CounterRow {
  projectId: string;
  tool: string;
  name: CounterName;
  outcome: CallOutcome | '';
  code: string;
  /** A bucket's upper bound in seconds (Infinity for the last); 0 for series that are not buckets. */
  le: number;
  value: number;
}

/** What an execution adds to the counters. */
export interface ExecutionCount {
  projectId: string;
  tool: string;
  /** The error code of a failure; undefined on success. */
  errorCode?: string;
  durationMs: number;
  queuedMs: number;
  attempts: number;
  slow: boolean;
  /** The slot's lease was lost while the tool ran. */
  leaseLost: boolean;
}

/** The counter rows one execution adds to. */
export function executionCounts(execution: ExecutionCount): CounterRow[] {
  const { projectId, tool } = execution;
  const row = (name: CounterName, value: number, labels: Partial<Pick<CounterRow, 'outcome' | 'code' | 'le'>> = {}): CounterRow => ({
    projectId,
    tool,
    name,
    outcome: '',
    code: '',
    le: 0,
    value,
    ...labels,
  });
  const duration = execution.durationMs / 1000;
  const queueWait = execution.queuedMs / 1000;
  const rows = [
    execution.errorCode === undefined
      ? row('calls', 1, { outcome: 'success' })
      : row('calls', 1, { outcome: 'failure', code: execution.errorCode }),
    row('duration_bucket', 1, { le: bucketOf(duration, DURATION_BUCKETS) }),
    row('duration_sum', duration),
    row('queue_wait_bucket', 1, { le: bucketOf(queueWait, QUEUE_WAIT_BUCKETS) }),
    row('queue_wait_sum', queueWait),
  ];
  if (execution.attempts > 1) rows.push(row('retries', execution.attempts - 1));
  if (execution.slow) rows.push(row('slow_calls', 1));
  if (execution.leaseLost) rows.push(row('lease_warnings', 1));
  return rows;
}

/** The counter row a call refused before executing adds to. */
export function refusalCount(projectId: string, tool: string, code: string): CounterRow[] {
  return [{ projectId, tool, name: 'calls', outcome: 'refused', code, le: 0, value: 1 }];
}

/** The smallest bound at or above `value`, or Infinity. */
function bucketOf(value: number, bounds: readonly number[]): number {
  return bounds.find((bound) => value <= bound) ?? Infinity;
}

/**
 * The statement adding `rows` to the counters: one insert that adds to the rows already there.
 * Meant for the batch that writes the execution or the refusal, so both land or neither does.
 */
export function addCounts(db: Database, rows: readonly CounterRow[]) {
  return db
    .insert(toolCounters)
    .values(rows.map((row) => ({ ...row })))
    .onConflictDoUpdate({
      target: [toolCounters.projectId, toolCounters.tool, toolCounters.name, toolCounters.outcome, toolCounters.code, toolCounters.le],
      set: { value: sql`${toolCounters.value} + excluded.value` },
    });
}

/** Every counter of one project (or of every project), with the projects whose series to show. */
export interface CounterTotals {
  /** Project ids: each gets every series, at 0 until its first call. */
  projects: string[];
  rows: CounterRow[];
}

/** Reads the counters of `projectId`, or of every project when it is undefined, in one round trip. */
export async function readCounters(db: Database, projectId?: string): Promise<CounterTotals> {
  const columns = {
    projectId: toolCounters.projectId,
    tool: toolCounters.tool,
    name: toolCounters.name,
    outcome: toolCounters.outcome,
    code: toolCounters.code,
    le: toolCounters.le,
    value: toolCounters.value,
  };
  if (projectId !== undefined) {
    const rows = await db.select(columns).from(toolCounters).where(eq(toolCounters.projectId, projectId));
    return { projects: [projectId], rows: rows.map(counterRow) };
  }
  const [all, rows] = await db.batch([
    db.select({ id: projects.id }).from(projects).orderBy(projects.id),
    db.select(columns).from(toolCounters),
  ]);
  return { projects: all.map((project) => project.id), rows: rows.map(counterRow) };
}

function counterRow(row: {
  projectId: string;
  tool: string;
  name: string;
  outcome: string;
  code: string;
  le: number;
  value: number;
}): CounterRow {
  return {
    ...row,
    name: row.name as CounterName,
    outcome: row.outcome as CounterRow['outcome'],
    le: Number(row.le),
    value: Number(row.value),
  };
}
