/**
 * The execution trace: one `tool_executions` row per execution, written after the response is
 * sent (through `waitUntil`), so tracing never delays or fails a call. The same batch (one
 * transaction) adds the execution to the project's cumulative counters (./counters.ts).
 *
 * Input, output, error and retry errors are stored as JSON text in `json` columns: a faithful
 * copy whatever they contain. JSON.stringify escapes NUL and unpaired surrogates (`\u0000`,
 * `\ud800`), `json` keeps that text as written (where `jsonb` would refuse it and lose the row),
 * and reading the row back parses it into exactly the values that were traced.
 */
import { DrizzleQueryError, sql, type SQL } from 'drizzle-orm';
import { toolExecutions } from '../../drizzle/schema.ts';
import type { Outcome, Warning } from '../core/contract.ts';
import type { Database } from '../core/database.ts';
import { addCounts, executionCounts } from './counters.ts';
import { errorForLog, log } from '../core/log.ts';
import type { SpanContext } from './trace-context.ts';

export interface ExecutionRecord {
  traceId: string;
  tool: string;
  projectId: string;
  input: unknown;
  outcome: Outcome<unknown>;
  durationMs: number;
  attempts: number;
  queuedMs: number;
  performanceWarning: boolean;
  /** What the answer's `meta.warnings` said, in order (`lease_lost` when the slot's lease was lost while the tool ran). */
  warnings: readonly Warning[];
  /** When the call arrived. */
  startedAt: Date;
  /** The API key that made the call: the actor. */
  apiKeyId: string;
  /** Each failed attempt that was retried, in order. */
  retryErrors: readonly RetryError[];
  span: SpanContext;
}

/** A failed attempt that was tried again, as the trace keeps it. */
export interface RetryError {
  /** The attempt that failed (1 for the first). */
  attempt: number;
  code: string;
  message: string;
  /** Unix milliseconds. */
  timeMs: number;
  /** The error behind it, stack included. */
  cause: unknown;
}

/** Writes one execution to the trace and its counters. Never rejects: a failed write is logged instead. */
export async function recordExecution(db: Database, record: ExecutionRecord): Promise<void> {
  const { outcome } = record;
  const counts = executionCounts({
    projectId: record.projectId,
    tool: record.tool,
    errorCode: outcome.ok ? undefined : outcome.error.code,
    durationMs: record.durationMs,
    queuedMs: record.queuedMs,
    attempts: record.attempts,
    slow: record.performanceWarning,
    leaseLost: record.warnings.some((warning) => warning.code === 'lease_lost'),
  });
  try {
    const trace = db.insert(toolExecutions).values({
      id: record.traceId,
      projectId: record.projectId,
      tool: record.tool,
      status: outcome.ok ? 'success' : 'error',
      errorCode: outcome.ok ? null : outcome.error.code,
      input: jsonText(record.input),
      output: outcome.ok ? jsonText(outcome.data) : null,
      error: outcome.ok ? null : jsonText({ ...outcome.error, cause: describeCause(outcome.cause) }),
      durationMs: record.durationMs,
      attempts: record.attempts,
      queuedMs: record.queuedMs,
      performanceWarning: record.performanceWarning,
      createdAt: record.startedAt,
      apiKeyId: record.apiKeyId,
      retryErrors: record.retryErrors.length ? jsonText(record.retryErrors) : null,
      warnings: record.warnings.length ? jsonText(record.warnings) : null,
      otelTraceId: record.span.traceId,
      otelSpanId: record.span.spanId,
      otelParentSpanId: record.span.parentSpanId ?? null,
    });
    await db.batch([trace, addCounts(db, counts)]);
  } catch (error) {
    log('error', 'trace_write_failed', { trace_id: record.traceId, tool: record.tool, error: errorForLog(error) });
  }
}

/**
 * `value` as a `json` parameter. Values JSON cannot carry are written as JSON does for data
 * (undefined omitted), a bigint as its decimal text, and a value that cannot be serialised at
 * all (a cycle) as a note saying why, so the row is still written.
 */
function jsonText(value: unknown): SQL {
  let text: string | undefined;
  try {
    text = JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? item.toString() : item));
  } catch (error) {
    text = JSON.stringify({ unserializable: String(error) });
  }
  return sql`${text ?? null}::json`;
}

/** What stands in a trace for the message of a failed statement: the statement and its parameters are never shown. */
const WITHHELD_QUERY = 'Failed query (its SQL text and parameters are not recorded; the database error follows as its cause)';

/**
 * An error as plain data, stack and causes included (for the trace, which the project's callers
 * read at GET /executions/:trace_id, never for the answer). A failed statement's SQL text and
 * parameters (drizzle's DrizzleQueryError writes them into its message) are withheld: the
 * database's own error, beneath it, says what went wrong.
 */
export function describeCause(cause: unknown, depth = 0): unknown {
  if (!(cause instanceof Error)) return cause;
  const message = cause instanceof DrizzleQueryError ? WITHHELD_QUERY : cause.message;
  const stack = cause.stack?.replace(cause.message, message);
  const described: Record<string, unknown> = { name: cause.name, message, stack };
  for (const key of ['code', 'detail', 'constraint', 'table', 'column'] as const) {
    const value = (cause as unknown as Record<string, unknown>)[key];
    if (value !== undefined) described[key] = value;
  }
  if (cause.cause !== undefined && depth < 3) described.cause = describeCause(cause.cause, depth + 1);
  return described;
}
