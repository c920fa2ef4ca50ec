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
import type { Links } from '../core/links.ts';
import type { AnyTool, ToolContext } from '../core/tool.ts';
import { validateInput } from '../core/validation.ts';
import { admissionFromEnv, type Admission, type Admitted } from '../concurrency/admission.ts';
import type { LeaseLapse } from '../concurrency/semaphore.ts';
import { errorForLog, log } from '../core/log.ts';
import { describeCause, type RetryError } from '../observability/tracing.ts';
import type { Providers } from '../core/providers.ts';
import type { Authorized } from '../auth/authorize.ts';
import { confirmedFor, deniedTool } from '../auth/caller.ts';
import { afterResponse, CallReport, logUnsuccessful } from './call-report.ts';
import { runsLocally, type RequestScope } from './env.ts';
import { execute, leaseLapsedBeforeStart, leaseWarning, writeUnconfirmed } from './execute.ts';
import { callIds, claimIdempotencyKey, type Claim } from './idempotency.ts';
import { linksFromEnv } from './link-templates.ts';
import { withQuerySignal } from './query-signal.ts';
import { DEFAULT_RETRIES, DEFAULT_RETRY_DELAY_MS, leavesWriteUnknown, withRetries } from './retry.ts';
import { roundToHundredths } from '../core/numbers.ts';

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
  /** For a call made by code mode's code (shared/codemode/): the trace id of that code's execution, which its trace rows name. */
  parentExecutionId?: string;
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
 * trace. Never throws. The stages below run in turn over one {@link CallState}; each either
 * hands the call on or ends it with a refusal.
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
  options: PipelineOptions = {},
): Promise<CallResult> {
  const state = startCall(tool, call, caller, scope, options);
  const checked = await check(state);
  if ('outcome' in checked) return checked;
  const claimed = await claim(state, checked);
  if (claimed && 'outcome' in claimed) return claimed;
  const admitted = await admit(state, checked.admission, claimed);
  if ('outcome' in admitted) return admitted;
  const execution = await run(state, { ...checked, claim: claimed, permit: admitted.permit });
  return finish(state, execution, { input: checked.input, claim: claimed, admitted });
}

/** One call as it moves through the stages: what it is, who asked, and how its answer is reported. */
interface CallState {
  tool: AnyTool;
  call: ToolCall;
  caller: Authorized;
  scope: RequestScope;
  options: Required<PipelineOptions>;
  traceId: string;
  startedAt: number;
  report: CallReport;
  /** The idempotency key the call is run under, for a write that was sent one. */
  key?: Parsed<string>;
}

/** What the checks before admission established: the call may run, with this input. */
interface Checked {
  admission: Admission;
  input: unknown;
  links: Links;
  key?: string;
}

/** A claimed idempotency key: the call runs under it. */
type ClaimedKey = Extract<Claim, { replay?: undefined }>;

/** The call's slot, how long it queued for it, and when it got it (epoch ms, for the trace). */
type Slot = Admitted & { admittedAtMs: number };

/** What running the tool came to. */
interface Execution {
  outcome: Outcome<unknown>;
  attempts: number;
  executionMs: number;
  lapse?: LeaseLapse;
  retryErrors: RetryError[];
}

function startCall(tool: AnyTool, call: ToolCall, caller: Authorized, scope: RequestScope, options: PipelineOptions): CallState {
  const traceId = crypto.randomUUID();
  const report = new CallReport({
    tool,
    traceId,
    arrivedAt: new Date(),
    traceparent: call.traceparent,
    toolCallId: call.toolCallId,
    caller,
    scope,
    parentExecutionId: call.parentExecutionId,
  });
  const resolved: Required<PipelineOptions> = {
    slowCallMs: options.slowCallMs ?? DEFAULT_SLOW_CALL_MS,
    retries: options.retries ?? DEFAULT_RETRIES,
    retryDelayMs: options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS,
    settleWritesMs: options.settleWritesMs ?? DEFAULT_SETTLE_WRITES_MS,
  };
  // Read-only tools ignore the key: repeating them changes nothing.
  const key = tool.acceptsIdempotencyKey ? call.idempotencyKey : undefined;
  return { tool, call, caller, scope, options: resolved, traceId, startedAt: performance.now(), report, ...(key && { key }) };
}

/** The meta of the call's envelope, as of now. */
function metaOf(state: CallState, attempts = 0, queuedMs = 0, executionMs = 0): Meta {
  return {
    tool: state.tool.id,
    trace_id: state.traceId,
    duration_ms: roundToHundredths(performance.now() - state.startedAt),
    attempts,
    queued_ms: roundToHundredths(queuedMs),
    performance_warning: executionMs > state.options.slowCallMs,
  };
}

/**
 * A refusal: it happens before execution, so attempts stays 0. A revoked key's refusal is not
 * recorded: the key no longer vouches for the project.
 */
function refuse(state: CallState, failure: Failure, projectId?: string): CallResult {
  logUnsuccessful('call_refused', failure, { tool: state.tool.id, trace_id: state.traceId, project_id: projectId });
  return { outcome: failure, meta: metaOf(state) };
}

/**
 * A refusal that waits for the key's re-check, if one is under way: a key revoked meanwhile gets
 * 401. Otherwise the project is known, and the refusal is recorded for its metrics.
 */
async function refuseChecked(state: CallState, failure: Failure): Promise<CallResult> {
  const revoked = await state.caller.confirmed;
  if (revoked) return refuse(state, revoked);
  const refused = refuse(state, failure, state.caller.project.id);
  state.report.refused(failure, refused.meta.duration_ms);
  return refused;
}

/** Stage 1: the tool is allowed and available, the key well formed, the input read and valid. */
async function check(state: CallState): Promise<Checked | CallResult> {
  const { tool, call, caller, scope, key } = state;
  // A tool outside the scope as last verified is judged again once the re-check (if one is under
  // way) has refreshed it: a key widened meanwhile is not refused on its old toolsets.
  const denied = deniedTool(caller, tool) && (await confirmedFor(caller, tool));
  if (denied) return refuseChecked(state, denied);
  if (key && !key.ok) return refuseChecked(state, key);
  if (tool.unavailable) return refuseChecked(state, tool.unavailable);
  const admission = admissionFromEnv(scope.env, { local: runsLocally(scope.env), redis: caller.redis });
  if ('ok' in admission) return refuseChecked(state, admission);
  const raw = await call.readInput(tool.hint);
  if (!raw.ok) return refuseChecked(state, raw);
  state.report.received = raw.value;
  const input = validateInput(tool.input, raw.value, tool.hint);
  if (!input.ok) return refuseChecked(state, input);
  state.report.received = input.value;
  const links = linksFromEnv(scope.env, call.origin, caller.project.id);
  if (!links.ok) return refuseChecked(state, links);
  return { admission, input: input.value, links: links.links, ...(key?.ok && { key: key.value }) };
}

/**
 * Stage 2, for a call with an idempotency key: the stored answer is replayed, or the key is
 * claimed for this call, by a key confirmed valid (a revoked one neither replays nor claims).
 * Undefined for a call without a key.
 */
async function claim(state: CallState, { input, key }: Checked): Promise<ClaimedKey | CallResult | undefined> {
  if (key === undefined) return undefined;
  const { caller, tool, scope, traceId } = state;
  const refused = await confirmedFor(caller, tool);
  if (refused) return refuse(state, refused);
  const claimed = await claimIdempotencyKey(caller.db, {
    projectId: caller.project.id,
    toolId: tool.id,
    key,
    input,
    traceId,
    defer: (work) => scope.waitUntil(afterResponse(work)),
  });
  if (!claimed.ok) return refuse(state, claimed, caller.project.id);
  if (claimed.replay)
    return { outcome: claimed.replay.outcome, meta: { ...metaOf(state), trace_id: claimed.replay.traceId, replayed: true } };
  return claimed;
}

/**
 * Stage 3: the rate limit and a slot of the global semaphore, while the key's re-check finishes. A
 * slot whose lease lapsed before the tool started is not used: the call did not run.
 */
async function admit(state: CallState, admission: Admission, claimed: ClaimedKey | undefined): Promise<Slot | CallResult> {
  const { tool, call, caller, scope, traceId } = state;
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
    // The gate: the tool runs only for a credential confirmed valid now, on its refreshed scope.
    confirmedFor(caller, tool),
  ]);
  if (revoked || !admitted.ok) {
    if (claimed) scope.waitUntil(claimed.release());
    if (admitted.ok) scope.waitUntil(admitted.permit.release());
    return revoked ? refuse(state, revoked) : refuseChecked(state, admitted as Failure);
  }
  if (queued) log('info', 'dequeued', { tool: tool.id, trace_id: traceId, queued_ms: roundToHundredths(admitted.queuedMs) });
  const admittedAtMs = Date.now();
  const lapsedBefore = admitted.permit.lapse();
  if (lapsedBefore) {
    if (claimed) scope.waitUntil(claimed.release());
    scope.waitUntil(admitted.permit.release());
    return refuseChecked(state, leaseLapsedBeforeStart(lapsedBefore));
  }
  return { ...admitted, admittedAtMs };
}

/**
 * Stage 4: the tool runs, with retries, holding its slot; the slot is released (off the answer's
 * path) whatever happens. A write holds its slot while it settles: it is still executing, and the
 * limit counts executions.
 */
async function run(
  state: CallState,
  { input, links, claim: claimed, permit }: Checked & { claim: ClaimedKey | undefined; permit: Admitted['permit'] },
): Promise<Execution> {
  const { tool, call, caller, scope, traceId, options } = state;
  const retryErrors: RetryError[] = [];
  const startedAt = performance.now();
  try {
    // Aborted when the caller goes away (never on a lapsed lease: see leaseWarning): the tool's
    // statements too, sent through the request's client within withQuerySignal; the trace, written
    // by the same client after the answer, is outside it.
    const context = toolContext(state, { links, idFor: claimed ? claimed.idFor : callIds(caller.project.id, tool.id, traceId, input) });
    const retried = await withRetries(() => withQuerySignal(call.signal, () => execute(tool, input, context)), {
      retries: options.retries,
      delayMs: options.retryDelayMs,
      settleMs: tool.acceptsIdempotencyKey ? options.settleWritesMs : 0,
      signal: call.signal,
      onRetry: (attempt, failure) => {
        retryErrors.push({
          attempt: attempt - 1,
          code: failure.error.code,
          message: failure.error.message,
          timeMs: Date.now(),
          cause: describeCause(failure.cause),
        });
        log('warn', 'retrying', { tool: tool.id, trace_id: traceId, attempt, code: failure.error.code, error: errorForLog(failure.cause) });
      },
    });
    const { attempts } = retried;
    let { outcome } = retried;
    if (tool.acceptsIdempotencyKey && !outcome.ok && leavesWriteUnknown(outcome)) {
      const key = state.key?.ok ? state.key.value : undefined;
      outcome = writeUnconfirmed(outcome, { key: key ?? traceId, callersKey: key !== undefined });
    }
    const lapse = permit.lapse();
    return { outcome, attempts, executionMs: performance.now() - startedAt, retryErrors, ...(lapse && { lapse }) };
  } finally {
    scope.waitUntil(permit.release());
  }
}

/** What the tool sees of its call: the database, project, providers (built on first use), signal, ids, links and progress. */
function toolContext(
  { tool, call, caller, scope, traceId }: CallState,
  { links, idFor }: Pick<ToolContext, 'links' | 'idFor'>,
): ToolContext {
  let providers: Providers | undefined;
  let reported = -Infinity;
  return {
    db: caller.db,
    project: caller.project,
    get providers() {
      if (!tool.providers)
        throw new Error(`The tool '${tool.id}' reads context.providers, but its definition names none (providers: providersFromEnv).`);
      return (providers ??= tool.providers(scope.env as Record<string, unknown>));
    },
    signal: call.signal,
    traceId,
    idFor,
    links,
    // Only values that increase are passed on: a retried attempt restarting from zero is not reported until it passes what was.
    progress: (done, total, message) => {
      if (!call.onProgress || !(done > reported)) return;
      reported = done;
      call.onProgress({ progress: done, ...(total !== undefined && { total }), ...(message !== undefined && { message }) });
    },
  };
}

/**
 * Stage 5: the answer's meta and warnings, the logs of a lost lease, a failure or a slow execution,
 * the key's stored answer, and the trace (recorded after the answer).
 */
async function finish(
  state: CallState,
  { outcome, attempts, executionMs, lapse, retryErrors }: Execution,
  { input, claim: claimed, admitted }: { input: unknown; claim: ClaimedKey | undefined; admitted: Slot },
): Promise<CallResult> {
  const { tool, caller, traceId, options } = state;
  const warnings = lapse ? [leaseWarning(lapse)] : undefined;
  if (lapse)
    log('warn', 'lease_lost', {
      tool: tool.id,
      trace_id: traceId,
      project_id: caller.project.id,
      reason: lapse.reason,
      detail: lapse.detail,
      ok: outcome.ok,
    });
  if (claimed) await claimed.settle(outcome);
  if (!outcome.ok) logUnsuccessful('call_failed', outcome, { tool: tool.id, trace_id: traceId, project_id: caller.project.id, attempts });

  const meta = { ...metaOf(state, attempts, admitted.queuedMs, executionMs), ...(warnings && { warnings }) };
  if (meta.performance_warning) {
    log('warn', 'slow_execution', {
      tool: tool.id,
      trace_id: traceId,
      execution_ms: roundToHundredths(executionMs),
      threshold_ms: options.slowCallMs,
    });
  }
  state.report.executed({
    input,
    outcome,
    durationMs: meta.duration_ms,
    attempts,
    queuedMs: meta.queued_ms,
    performanceWarning: meta.performance_warning,
    warnings: answerWarnings(outcome, meta),
    retryErrors,
    admittedAtMs: admitted.admittedAtMs,
  });
  return { outcome, meta };
}
