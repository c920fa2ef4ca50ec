/**
 * The execution pipeline, written once for every tool:
 * authenticate -> parse and validate -> execute (with retries) -> answer with the envelope ->
 * record the trace.
 *
 * Every path answers with the envelope; nothing a tool throws reaches the caller.
 */
import { envelope, fail, statusOf, type Failure, type Meta, type Outcome } from './contract.ts';
import { authenticate } from './auth.ts';
import { createDb, databaseFailure, type Database } from './db.ts';
import type { Env } from './env.ts';
import { log } from './log.ts';
import type { AnyTool, ToolContext } from './tool.ts';
import { DEFAULT_RETRIES, DEFAULT_RETRY_DELAY_MS, withRetries } from './retry.ts';
import { describeCause, recordExecution } from './tracing.ts';
import { DEFAULT_BODY_LIMIT_BYTES, readJsonObject, validateInput } from './validation.ts';

export interface PipelineOptions {
  /** Request bodies above this are refused with PAYLOAD_TOO_LARGE. */
  bodyLimitBytes?: number;
  /** Executions slower than this still complete, with `meta.performance_warning: true`. */
  slowCallMs?: number;
  /** Retries of transient failures, and the fixed delay before each. */
  retries?: number;
  retryDelayMs?: number;
}

export const DEFAULT_SLOW_CALL_MS = 5_000;

/** What the pipeline needs from the Workers runtime for one request. */
export interface RequestScope {
  env: Env;
  waitUntil(promise: Promise<unknown>): void;
}

/** Runs one tool call and answers with the envelope. Never throws. */
export async function runToolCall(
  tool: AnyTool,
  request: Request,
  scope: RequestScope,
  {
    bodyLimitBytes = DEFAULT_BODY_LIMIT_BYTES,
    slowCallMs = DEFAULT_SLOW_CALL_MS,
    retries = DEFAULT_RETRIES,
    retryDelayMs = DEFAULT_RETRY_DELAY_MS,
  }: PipelineOptions = {},
): Promise<Response> {
  const traceId = crypto.randomUUID();
  const startedAt = performance.now();
  const meta = (attempts: number, executionMs = 0): Meta => ({
    tool: tool.id,
    trace_id: traceId,
    duration_ms: round(performance.now() - startedAt),
    attempts,
    queued_ms: 0,
    performance_warning: executionMs > slowCallMs,
  });
  const refuse = (failure: Failure) => respond(failure, meta(0));

  if (tool.unavailable) return refuse(tool.unavailable);
  const db = connect(scope.env);
  if (!db.ok) return refuse(db);

  let auth;
  try {
    auth = await authenticate(request, db.value);
  } catch (error) {
    return refuse(databaseFailure(error) ?? unexpected(error, traceId));
  }
  if (!auth.ok) return refuse(auth);

  const body = await readJsonObject(request, tool.hint, bodyLimitBytes);
  if (!body.ok) return refuse(body);
  const input = validateInput(tool.input, body.value, tool.hint);
  if (!input.ok) return refuse(input);

  const context: ToolContext = { db: db.value, project: auth.project, signal: request.signal, traceId };
  const executionStartedAt = performance.now();
  const { outcome, attempts } = await withRetries(() => execute(tool, input.value, context), {
    retries,
    delayMs: retryDelayMs,
    signal: context.signal,
    onRetry: (attempt, failure) =>
      log('warn', 'retrying', { tool: tool.id, trace_id: traceId, attempt, code: failure.error.code, error: describeCause(failure.cause) }),
  });
  const executionMs = performance.now() - executionStartedAt;
  const answerMeta = meta(attempts, executionMs);
  if (answerMeta.performance_warning) {
    log('warn', 'slow_execution', { tool: tool.id, trace_id: traceId, execution_ms: round(executionMs), threshold_ms: slowCallMs });
  }
  // Deferred to a later task, so building and sending the record happens after the response is out.
  scope.waitUntil(afterResponse(() => recordExecution(db.value, {
      traceId,
      tool: tool.id,
      projectId: auth.project.id,
      input: input.value,
      outcome,
      durationMs: answerMeta.duration_ms,
      attempts: answerMeta.attempts,
      queuedMs: answerMeta.queued_ms,
      performanceWarning: answerMeta.performance_warning,
    })),
  );
  return respond(outcome, answerMeta);
}

/** Runs `execute`, turning anything thrown and any output that breaks the schema into a failure. */
async function execute(tool: AnyTool, input: unknown, context: ToolContext): Promise<Outcome<unknown>> {
  let outcome: Outcome<unknown>;
  try {
    outcome = await tool.execute(input, context);
  } catch (error) {
    outcome = databaseFailure(error) ?? unexpected(error, context.traceId);
  }
  if (!outcome.ok) {
    if (outcome.error.code === 'UNKNOWN_ERROR') log('error', 'tool_failed', { tool: tool.id, trace_id: context.traceId });
    return outcome;
  }
  const checked = tool.output.safeParse(outcome.data);
  if (checked.success) return { ...outcome, data: checked.data };
  return fail('UNKNOWN_ERROR', `The tool '${tool.id}' produced a result that does not match its declared output; this is a bug in the tool, recorded with trace id ${context.traceId}.`, {
    cause: checked.error,
  });
}

function afterResponse(work: () => Promise<void>): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0)).then(work);
}

function connect(env: Env): { ok: true; value: Database } | Failure {
  if (!env.DATABASE_URL) {
    return fail('CONFIG_ERROR', 'The deployment has no DATABASE_URL configured, so no tool can run.', {
      hint: 'Set the DATABASE_URL secret (wrangler secret put DATABASE_URL) or run npm run dev locally.',
      details: { reason: 'missing_database_url' },
    });
  }
  return { ok: true, value: createDb(env.DATABASE_URL) };
}

/** An error nobody anticipated: the caller learns the trace id, the trace keeps the stack. */
export function unexpected(error: unknown, traceId: string): Failure {
  return fail('UNKNOWN_ERROR', `The tool failed unexpectedly. The error was recorded with trace id ${traceId}; repeating the same call is unlikely to help.`, {
    cause: error,
  });
}

/** Serialises an outcome into the envelope response. */
export function respond(outcome: Outcome<unknown>, meta: Meta): Response {
  return Response.json(envelope(outcome, meta), { status: outcome.ok ? 200 : statusOf(outcome) });
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
