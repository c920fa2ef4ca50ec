/**
 * The execution pipeline, written once for every tool and every transport, for a caller already
 * authorised (shared/http/authorize.ts): read and validate the input -> rate limit and acquire a
 * slot (while a cached key is re-checked) -> execute (with retries) -> release -> the outcome and
 * the meta of its envelope -> record the trace. It knows no transport: HTTP and MCP
 * (shared/http/) turn credentials into the caller, and the outcome into their own answer.
 *
 * Every path ends in an outcome; nothing a tool throws reaches the caller. Nothing about the
 * deployment's configuration is told to a caller before its key is verified.
 */
import { answerWarnings, type Failure, type Meta, type Outcome } from '../core/contract.ts';
import type { Parsed } from '../core/body.ts';
import type { AnyTool, ToolContext } from '../core/tool.ts';
import { validateInput } from '../core/validation.ts';
import { admissionFromEnv } from '../concurrency/admission.ts';
import type { LeaseLapse } from '../concurrency/semaphore.ts';
import { errorForLog, log } from '../core/log.ts';
import { describeCause, type RetryError } from '../observability/tracing.ts';
import type { Providers } from '../core/providers.ts';
import { deniedTool, type Authorized } from './auth.ts';
import { afterResponse, CallReport, logUnsuccessful } from './call-report.ts';
import { runsLocally, type RequestScope } from './env.ts';
import { execute, leaseLapsedBeforeStart, leaseWarning, writeUnconfirmed } from './execute.ts';
import { callIds, claimIdempotencyKey } from './idempotency.ts';
import { linksFromEnv } from './link-templates.ts';
import { withQuerySignal } from './query-signal.ts';
import { DEFAULT_RETRIES, DEFAULT_RETRY_DELAY_MS, leavesWriteUnknown, withRetries } from './retry.ts';

/** Options of {@link callTool}, the same for every call a worker serves. */
export interface PipelineOptions {
  /** Executions slower than this still complete, with `meta.performance_warning: true`. */
  slowCallMs?: number;
  /** Retries of transient failures, and the fixed delay before each. */
  retries?: number;
  retryDelayMs?: number;
  /**
   * How long a write tool whose retries ran out on a transient database failure keeps being run
   * again (the delay doubling up to 8 s) until the database answers: its attempts are idempotent,
   * so the next one that gets through answers what was done, an earlier commit whose answer was
   * lost included. Past it, the call answers that its write is not confirmed and names the key to
   * repeat it with (see writeUnconfirmed). Reads keep the plain retries.
   */
  settleWritesMs?: number;
}

/** Default of {@link PipelineOptions}.slowCallMs. */
export const DEFAULT_SLOW_CALL_MS = 5_000;

/**
 * Default of {@link PipelineOptions}.settleWritesMs: 40 s, which with the retries before it stays
 * under the minute most MCP clients wait for an answer.
 */
export const DEFAULT_SETTLE_WRITES_MS = 40_000;

/**
 * One call as a transport (HTTP, MCP) hands it to the pipeline: what was sent, read the
 * transport's way. What the transport offers the tool while it runs belongs here too.
 */
export interface ToolCall {
  /** Reads and screens the raw input; `hint` is the example of a valid call for error messages. */
  readInput(hint: string): Promise<Parsed<Record<string, unknown>>>;
  /** Aborts when the caller goes away. */
  signal: AbortSignal;
  /** The idempotency key the call was sent with, as the transport read it (shared/runtime/idempotency.ts). */
  idempotencyKey?: Parsed<string>;
  /** The caller's W3C `traceparent`, if any: the execution becomes a span of the caller's trace. */
  traceparent?: string | null;
  /** The model's own id of this tool call, if the client sent one: the span's `gen_ai.tool.call.id`. */
  toolCallId?: string;
  /** The origin the request came to (`https://edge-tools.example.workers.dev`): links are absolute. */
  origin: string;
  /**
   * Where the tool's progress goes, when the transport can tell the caller (MCP with a
   * `progressToken`). Called only with values that increase: a retried attempt starting again
   * from zero is not reported until it passes what was already reported.
   */
  onProgress?: (progress: Progress) => void;
}

/** A tool's progress as the transport forwards it: `progress` of `total` (when known) done. */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** The outcome of a call and the meta of its envelope. */
export interface CallResult {
  outcome: Outcome<unknown>;
  meta: Meta;
}

/**
 * Runs one tool call through the whole pipeline for `caller`, authorised once for its request:
 * the caller's database and Redis clients serve the call's admission, idempotency record and
 * trace. Never throws.
 *
 * @example
 * const caller = await authorize(credentialsOf(request), scope, { traceId }); // shared/http/authorize.ts
 * if (caller.ok) {
 *   const { outcome, meta } = await callTool(tool, call, caller, scope);
 * }
 */
export async function callTool(
  tool: AnyTool,
  call: ToolCall,
  caller: Authorized,
  scope: RequestScope,
  {
    slowCallMs = DEFAULT_SLOW_CALL_MS,
    retries = DEFAULT_RETRIES,
    retryDelayMs = DEFAULT_RETRY_DELAY_MS,
    settleWritesMs = DEFAULT_SETTLE_WRITES_MS,
  }: PipelineOptions = {},
): Promise<CallResult> {
  const traceId = crypto.randomUUID();
  const startedAt = performance.now();
  const arrivedAt = new Date();
  const { db } = caller;
  const meta = (attempts = 0, queuedMs = 0, executionMs = 0): Meta => ({
    tool: tool.id,
    trace_id: traceId,
    duration_ms: round(performance.now() - startedAt),
    attempts,
    queued_ms: round(queuedMs),
    performance_warning: executionMs > slowCallMs,
  });
  const report = new CallReport({ tool, traceId, arrivedAt, traceparent: call.traceparent, toolCallId: call.toolCallId, caller, scope });
  // Refusals happen before execution: attempts stays 0. A revoked key's refusal is not recorded:
  // the key no longer vouches for the project.
  const refuse = (failure: Failure, projectId?: string): CallResult => {
    logUnsuccessful('call_refused', failure, { tool: tool.id, trace_id: traceId, project_id: projectId });
    return { outcome: failure, meta: meta() };
  };
  // A refusal waits for the key's re-check, if one is under way: a key revoked meanwhile gets 401.
  // Otherwise the project is known, and the refusal is recorded for its metrics.
  const refuseChecked = async (failure: Failure): Promise<CallResult> => {
    const revoked = await caller.confirmed;
    if (revoked) return refuse(revoked);
    const refused = refuse(failure, caller.project.id);
    report.refused(failure, refused.meta.duration_ms);
    return refused;
  };

  const denied = deniedTool(caller, tool);
  if (denied) return refuseChecked(denied);
  // Read-only tools ignore the key: repeating them changes nothing.
  const key = tool.acceptsIdempotencyKey ? call.idempotencyKey : undefined;
  if (key && !key.ok) return refuseChecked(key);

  if (tool.unavailable) return refuseChecked(tool.unavailable);
  const admission = admissionFromEnv(scope.env, { local: runsLocally(scope.env), redis: caller.redis });
  if ('ok' in admission) return refuseChecked(admission);
  const raw = await call.readInput(tool.hint);
  if (!raw.ok) return refuseChecked(raw);
  report.received = raw.value;
  const input = validateInput(tool.input, raw.value, tool.hint);
  if (!input.ok) return refuseChecked(input);
  report.received = input.value;
  const links = linksFromEnv(scope.env, call.origin, caller.project.id);
  if (!links.ok) return refuseChecked(links);

  // With an idempotency key: the stored answer is replayed, or the key is claimed for this call
  // (by a key confirmed valid: a revoked one neither replays nor claims).
  if (key) {
    const revoked = await caller.confirmed;
    if (revoked) return refuse(revoked);
  }
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
  if (claim && !claim.ok) return refuse(claim, caller.project.id);
  if (claim?.replay) return { outcome: claim.replay.outcome, meta: { ...meta(), trace_id: claim.replay.traceId, replayed: true } };

  let queued = false;
  const [admitted, revoked] = await Promise.all([
    admission.admit({
      callId: traceId,
      keyId: caller.keyId,
      rateLimitPerMinute: caller.rateLimitPerMinute,
      signal: call.signal,
      onQueued: (queueDepth) => {
        queued = true;
        log('info', 'queued', { tool: tool.id, trace_id: traceId, queue_depth: queueDepth });
      },
      waitUntil: scope.waitUntil,
    }),
    caller.confirmed,
  ]);
  if (revoked || !admitted.ok) {
    if (claim) scope.waitUntil(claim.release());
    if (admitted.ok) scope.waitUntil(admitted.permit.release());
    return revoked ? refuse(revoked) : refuseChecked(admitted as Failure);
  }
  if (queued) log('info', 'dequeued', { tool: tool.id, trace_id: traceId, queued_ms: round(admitted.queuedMs) });
  const admittedAtMs = Date.now();

  const { permit } = admitted;
  // A slot whose lease lapsed before the tool started is not used: the call did not run.
  const lapsedBefore = permit.lapse();
  if (lapsedBefore) {
    if (claim) scope.waitUntil(claim.release());
    scope.waitUntil(permit.release());
    return refuseChecked(leaseLapsedBeforeStart(lapsedBefore));
  }
  let outcome: Outcome<unknown>;
  let attempts: number;
  let lapse: LeaseLapse | undefined;
  const executionStartedAt = performance.now();
  const retryErrors: RetryError[] = [];
  try {
    // Aborted when the caller goes away (never on a lapsed lease: see leaseWarning): the tool's
    // statements too, sent through the request's client within withQuerySignal; the trace, written
    // by the same client after the answer, is outside it.
    const signal = call.signal;
    let providers: Providers | undefined;
    let reported = -Infinity;
    const context: ToolContext = {
      db,
      project: caller.project,
      get providers() {
        if (!tool.providers) throw new Error(`The tool '${tool.id}' reads context.providers, but its definition names none (providers: providersFromEnv).`);
        return (providers ??= tool.providers(scope.env as Record<string, unknown>));
      },
      signal,
      traceId,
      idFor: claim ? claim.idFor : callIds(caller.project.id, tool.id, traceId, input.value),
      links: links.links,
      progress: (done, total, message) => {
        if (!call.onProgress || !(done > reported)) return;
        reported = done;
        call.onProgress({ progress: done, ...(total !== undefined && { total }), ...(message !== undefined && { message }) });
      },
    };
    // A write holds its slot while it settles: it is still executing, and the limit counts executions.
    ({ outcome, attempts } = await withRetries(() => withQuerySignal(signal, () => execute(tool, input.value, context)), {
      retries,
      delayMs: retryDelayMs,
      settleMs: tool.acceptsIdempotencyKey ? settleWritesMs : 0,
      signal,
      onRetry: (attempt, failure) => {
        retryErrors.push({ attempt: attempt - 1, code: failure.error.code, message: failure.error.message, timeMs: Date.now(), cause: describeCause(failure.cause) });
        log('warn', 'retrying', { tool: tool.id, trace_id: traceId, attempt, code: failure.error.code, error: errorForLog(failure.cause) });
      },
    }));
    if (tool.acceptsIdempotencyKey && !outcome.ok && leavesWriteUnknown(outcome)) {
      outcome = writeUnconfirmed(outcome, { key: key?.value ?? traceId, callersKey: key !== undefined });
    }
    lapse = permit.lapse();
  } finally {
    scope.waitUntil(permit.release());
  }
  const executionMs = performance.now() - executionStartedAt;
  const warnings = lapse ? [leaseWarning(lapse)] : undefined;
  if (lapse) log('warn', 'lease_lost', { tool: tool.id, trace_id: traceId, project_id: caller.project.id, reason: lapse.reason, detail: lapse.detail, ok: outcome.ok });
  if (claim) await claim.settle(outcome);
  if (!outcome.ok) logUnsuccessful('call_failed', outcome, { tool: tool.id, trace_id: traceId, project_id: caller.project.id, attempts });

  const answerMeta = { ...meta(attempts, admitted.queuedMs, executionMs), ...(warnings && { warnings }) };
  if (answerMeta.performance_warning) {
    log('warn', 'slow_execution', { tool: tool.id, trace_id: traceId, execution_ms: round(executionMs), threshold_ms: slowCallMs });
  }
  report.executed({
    input: input.value,
    outcome,
    durationMs: answerMeta.duration_ms,
    attempts,
    queuedMs: answerMeta.queued_ms,
    performanceWarning: answerMeta.performance_warning,
    warnings: answerWarnings(outcome, answerMeta),
    retryErrors,
    admittedAtMs,
  });
  return { outcome, meta: answerMeta };
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
