/**
 * The execution trace: one `tool_executions` row per execution, written after the response is
 * sent (through `waitUntil`), so tracing never delays or fails a call.
 */
import { toolExecutions } from '../../drizzle/schema.ts';
import type { Outcome } from '../core/contract.ts';
import type { Database } from '../runtime/db.ts';
import { log } from './log.ts';
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

/** Writes one execution to the trace. Never rejects: a failed write is logged instead. */
export async function recordExecution(db: Database, record: ExecutionRecord): Promise<void> {
  const { outcome } = record;
  try {
    await db.insert(toolExecutions).values({
      id: record.traceId,
      projectId: record.projectId,
      tool: record.tool,
      status: outcome.ok ? 'success' : 'error',
      errorCode: outcome.ok ? null : outcome.error.code,
      input: record.input,
      output: outcome.ok ? outcome.data : null,
      error: outcome.ok ? null : { ...outcome.error, cause: describeCause(outcome.cause) },
      durationMs: record.durationMs,
      attempts: record.attempts,
      queuedMs: record.queuedMs,
      performanceWarning: record.performanceWarning,
      createdAt: record.startedAt,
      apiKeyId: record.apiKeyId,
      retryErrors: record.retryErrors.length ? record.retryErrors : null,
      otelTraceId: record.span.traceId,
      otelSpanId: record.span.spanId,
      otelParentSpanId: record.span.parentSpanId ?? null,
    });
  } catch (error) {
    log('error', 'trace_write_failed', { trace_id: record.traceId, tool: record.tool, error: describeCause(error) });
  }
}

/** An error as plain data, stack and causes included (for the trace, never for the caller). */
export function describeCause(cause: unknown, depth = 0): unknown {
  if (!(cause instanceof Error)) return cause;
  const described: Record<string, unknown> = { name: cause.name, message: cause.message, stack: cause.stack };
  for (const key of ['code', 'detail', 'constraint', 'table', 'column'] as const) {
    const value = (cause as unknown as Record<string, unknown>)[key];
    if (value !== undefined) described[key] = value;
  }
  if (cause.cause !== undefined && depth < 3) described.cause = describeCause(cause.cause, depth + 1);
  return described;
}
