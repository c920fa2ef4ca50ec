/**
 * The execution pipeline, written once for every tool and every transport:
 * authenticate -> read and validate the input -> rate limit and acquire a slot -> execute (with
 * retries) -> release -> answer with the envelope -> record the trace.
 *
 * Every path ends in an envelope; nothing a tool throws reaches the caller.
 */
import { envelope, fail, FailureError, statusOf, type Failure, type Meta, type Outcome } from '../core/contract.ts';
import { authenticate, type Caller } from './auth.ts';
import { admissionFromEnv } from '../concurrency/admission.ts';
import { createDb, databaseFailure, type Database } from './db.ts';
import { nameBasedUuid } from './ids.ts';
import { claimIdempotencyKey, keyFromHeader } from './idempotency.ts';
import type { Env } from './env.ts';
import { log } from '../observability/log.ts';
import { createProviders, readProviderConfig, type Providers } from '../providers/index.ts';
import { ProviderError, providerFailure } from '../providers/types.ts';
import { DEFAULT_RETRIES, DEFAULT_RETRY_DELAY_MS, withRetries } from './retry.ts';
import type { AnyTool, ToolContext } from '../core/tool.ts';
import { describeCause, recordExecution, type RetryError } from '../observability/tracing.ts';
import { exportSpan, otlpConfigFromEnv } from '../observability/otlp.ts';
import { recordRefusal } from '../observability/refusals.ts';
import { startSpan } from '../observability/trace-context.ts';
import { DEFAULT_BODY_LIMIT_BYTES, readJsonObject, validateInput, type Parsed } from '../core/validation.ts';

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

/** One call as any transport (HTTP, MCP) hands it to the pipeline. */
export interface ToolCall {
  /** The `Authorization` header. */
  authorization: string | null;
  /** Reads and screens the raw input; `hint` is the example of a valid call for error messages. */
  readInput(hint: string): Promise<Parsed<Record<string, unknown>>>;
  /** Aborts when the caller goes away. */
  signal: AbortSignal;
  /** The idempotency key the call was sent with, as the transport read it (shared/runtime/idempotency.ts). */
  idempotencyKey?: Parsed<string>;
  /** The caller's W3C `traceparent`, if any: the execution becomes a span of the caller's trace. */
  traceparent?: string | null;
}

/** The outcome of a call and the meta of its envelope. */
export interface CallResult {
  outcome: Outcome<unknown>;
  meta: Meta;
}

/** Runs one HTTP tool call (the JSON body is the input) and answers with the envelope. Never throws. */
export async function runToolCall(tool: AnyTool, request: Request, scope: RequestScope, options: PipelineOptions = {}): Promise<Response> {
  const bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const { outcome, meta } = await callTool(
    tool,
    {
      authorization: request.headers.get('authorization'),
      readInput: (hint) => readJsonObject(request, hint, bodyLimitBytes),
      signal: request.signal,
      idempotencyKey: keyFromHeader(request.headers.get('idempotency-key')),
      traceparent: request.headers.get('traceparent'),
    },
    scope,
    options,
  );
  return respond(outcome, meta);
}

/** Runs one tool call through the whole pipeline. Never throws. */
export async function callTool(
  tool: AnyTool,
  call: ToolCall,
  scope: RequestScope,
  { slowCallMs = DEFAULT_SLOW_CALL_MS, retries = DEFAULT_RETRIES, retryDelayMs = DEFAULT_RETRY_DELAY_MS }: PipelineOptions = {},
): Promise<CallResult> {
  const traceId = crypto.randomUUID();
  const startedAt = performance.now();
  const arrivedAt = new Date();
  const meta = (attempts = 0, queuedMs = 0, executionMs = 0): Meta => ({
    tool: tool.id,
    trace_id: traceId,
    duration_ms: round(performance.now() - startedAt),
    attempts,
    queued_ms: round(queuedMs),
    performance_warning: executionMs > slowCallMs,
  });
  // Refusals happen before execution: attempts stays 0.
  const refuse = (failure: Failure): CallResult => ({ outcome: failure, meta: meta() });

  if (tool.unavailable) return refuse(tool.unavailable);
  const admission = admissionFromEnv(scope.env);
  if ('ok' in admission) return refuse(admission);
  const caller = await authorize(call.authorization, scope.env, traceId);
  if (!caller.ok) return refuse(caller);
  const db = caller.db;
  // The project is known from here on: refusals are counted for its metrics.
  const refuseCounted = (failure: Failure): CallResult => {
    const record = { traceId, projectId: caller.project.id, apiKeyId: caller.keyId, tool: tool.id, code: failure.error.code, startedAt: arrivedAt };
    scope.waitUntil(afterResponse(() => recordRefusal(db, record)));
    return refuse(failure);
  };
  // Read-only tools ignore the key: repeating them changes nothing.
  const key = tool.acceptsIdempotencyKey ? call.idempotencyKey : undefined;
  if (key && !key.ok) return refuseCounted(key);

  const raw = await call.readInput(tool.hint);
  if (!raw.ok) return refuseCounted(raw);
  const input = validateInput(tool.input, raw.value, tool.hint);
  if (!input.ok) return refuseCounted(input);

  // With an idempotency key: the stored answer is replayed, or the key is claimed for this call.
  const claim =
    key &&
    (await claimIdempotencyKey(db, {
      projectId: caller.project.id,
      toolId: tool.id,
      key: key.value,
      input: input.value,
      traceId,
      defer: (work) => scope.waitUntil(afterResponse(work)),
    }));
  if (claim && !claim.ok) return refuse(claim);
  if (claim?.replay) return { outcome: claim.replay.outcome, meta: { ...meta(), trace_id: claim.replay.traceId, replayed: true } };

  let queued = false;
  const admitted = await admission.admit({
    callId: traceId,
    keyId: caller.keyId,
    rateLimitPerMinute: caller.rateLimitPerMinute,
    signal: call.signal,
    onQueued: (queueDepth) => {
      queued = true;
      log('info', 'queued', { tool: tool.id, trace_id: traceId, queue_depth: queueDepth });
    },
  });
  if (!admitted.ok) {
    if (claim) scope.waitUntil(claim.release());
    return refuseCounted(admitted);
  }
  if (queued) log('info', 'dequeued', { tool: tool.id, trace_id: traceId, queued_ms: round(admitted.queuedMs) });

  const { permit } = admitted;
  let providers: Providers | undefined;
  const context: ToolContext = {
    db,
    project: caller.project,
    get providers() {
      if (providers) return providers;
      const config = readProviderConfig(scope.env as Record<string, unknown>);
      if (!config.ok) throw new FailureError(config);
      return (providers = createProviders(config.config, scope.env.AI));
    },
    signal: AbortSignal.any([call.signal, permit.lost]),
    traceId,
    idFor: claim ? claim.idFor : (purpose) => nameBasedUuid(`${caller.project.id}:${tool.id}:${traceId}:${purpose}`),
  };
  const executionStartedAt = performance.now();
  const retryErrors: RetryError[] = [];
  let { outcome, attempts } = await withRetries(() => execute(tool, input.value, context), {
    retries,
    delayMs: retryDelayMs,
    signal: context.signal,
    onRetry: (attempt, failure) => {
      const cause = describeCause(failure.cause);
      retryErrors.push({ attempt: attempt - 1, code: failure.error.code, message: failure.error.message, timeMs: Date.now(), cause });
      log('warn', 'retrying', { tool: tool.id, trace_id: traceId, attempt, code: failure.error.code, error: cause });
    },
  });
  const executionMs = performance.now() - executionStartedAt;
  scope.waitUntil(permit.release());
  if (permit.lost.aborted) outcome = leaseLost(outcome);
  if (claim) await claim.settle(outcome);

  const answerMeta = meta(attempts, admitted.queuedMs, executionMs);
  if (answerMeta.performance_warning) {
    log('warn', 'slow_execution', { tool: tool.id, trace_id: traceId, execution_ms: round(executionMs), threshold_ms: slowCallMs });
  }
  const span = startSpan(traceId, call.traceparent);
  const otlp = otlpConfigFromEnv(scope.env);
  // Deferred to a later task, so building and sending the record happens after the response is out.
  scope.waitUntil(
    afterResponse(async () => {
      await Promise.all([
        recordExecution(db, {
          traceId,
          tool: tool.id,
          projectId: caller.project.id,
          input: input.value,
          outcome,
          durationMs: answerMeta.duration_ms,
          attempts,
          queuedMs: answerMeta.queued_ms,
          performanceWarning: answerMeta.performance_warning,
          startedAt: arrivedAt,
          apiKeyId: caller.keyId,
          retryErrors,
          span,
        }),
        otlp &&
          exportSpan(otlp, {
            context: span,
            tool: tool.id,
            toolDescription: tool.description,
            executionId: traceId,
            projectId: caller.project.id,
            startTimeMs: arrivedAt.getTime(),
            durationMs: answerMeta.duration_ms,
            errorCode: outcome.ok ? undefined : outcome.error.code,
            errorMessage: outcome.ok ? undefined : outcome.error.message,
            attempts,
            queuedMs: answerMeta.queued_ms,
            performanceWarning: answerMeta.performance_warning,
            retries: retryErrors,
          }),
      ]);
    }),
  );
  return { outcome, meta: answerMeta };
}

/** Runs `execute`, turning anything thrown and any output that breaks the schema into a failure. */
async function execute(tool: AnyTool, input: unknown, context: ToolContext): Promise<Outcome<unknown>> {
  let outcome: Outcome<unknown>;
  try {
    outcome = await tool.execute(input, context);
  } catch (error) {
    outcome = failureOf(error, context.traceId);
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

/** What a thrown error means for the caller: a carried failure, a provider or database failure, or a bug. */
function failureOf(error: unknown, traceId: string): Failure {
  if (error instanceof FailureError) return error.failure;
  if (error instanceof ProviderError) return providerFailure(error);
  return databaseFailure(error) ?? unexpected(error, traceId);
}

/**
 * The slot's lease could not be renewed while the tool ran, so another call may have started in
 * its place: the limit can no longer be vouched for, and the call is reported as failed.
 */
function leaseLost(outcome: Outcome<unknown>): Failure {
  return fail('BUSY', 'The execution slot was lost while the tool ran (its lease could not be renewed), so the result cannot be trusted. The tool may or may not have completed: check before repeating the call.', {
    retryable: true,
    details: { reason: 'lease_lost', retry_after_ms: 1_000 },
    cause: outcome.ok ? undefined : outcome.cause,
  });
}

function afterResponse(work: () => Promise<unknown>): Promise<unknown> {
  return new Promise((resolve) => setTimeout(resolve, 0)).then(work);
}

/**
 * Resolves the caller of a request from its `Authorization` header, with the database client the
 * call will use. Answers CONFIG_ERROR without DATABASE_URL and UNAUTHENTICATED for a bad key.
 * Transports call it to refuse a request before reading it (MCP); never throws.
 */
export async function authorize(
  authorization: string | null,
  env: Env,
  traceId: string = crypto.randomUUID(),
): Promise<({ ok: true; db: Database } & Caller) | Failure> {
  const db = connect(env);
  if (!db.ok) return db;
  try {
    const caller = await authenticate(authorization, db.value);
    return caller.ok ? { ...caller, db: db.value } : caller;
  } catch (error) {
    return databaseFailure(error) ?? unexpected(error, traceId);
  }
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

/** Serialises an outcome into the envelope response; a failure that says when to retry sets `Retry-After` too. */
export function respond(outcome: Outcome<unknown>, meta: Meta): Response {
  const retryAfterMs = outcome.ok ? undefined : outcome.error.details?.retry_after_ms;
  const headers: Record<string, string> = typeof retryAfterMs === 'number' ? { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) } : {};
  return Response.json(envelope(outcome, meta), { status: outcome.ok ? 200 : statusOf(outcome), headers });
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
