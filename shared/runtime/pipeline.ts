/**
 * The execution pipeline, written once for every tool, for code mode's executions and for every
 * transport, for a request already authorised (its gate, shared/auth/gate.ts): read and validate
 * the input -> the gate, the idempotency claim and admission (rate limit and slot) at once ->
 * execute (with retries) -> release -> the outcome and the meta of its envelope -> record the
 * trace. It knows no transport: HTTP and MCP (shared/http/) turn credentials into the gate, and the
 * outcome into their own answer.
 *
 * Every path ends in an outcome; nothing a tool throws reaches the caller. Nothing about the
 * deployment's configuration is told to a caller before its credential is confirmed.
 *
 * Some 400 lines on purpose: the four stages are the documented flow, read top to bottom, over the
 * private types of a call in flight (CallState, Checked, Admit, Execution); what stands on its own
 * lives beside it (call.ts, tool-work.ts, execute.ts, call-report.ts, retry.ts, idempotency.ts).
 */
import { answerWarnings, type Failure, type Meta, type Outcome } from '../core/contract.ts';
import type { Links } from '../core/links.ts';
import type { AnyTool } from '../core/tool.ts';
import { validateInput } from '../core/validation.ts';
import { admissionFromEnv, type Admission, type Admitted } from '../concurrency/admission.ts';
import type { LeaseLapse } from '../concurrency/semaphore.ts';
import { errorForLog, log } from '../core/log.ts';
import { describeCause, type RetryError } from '../observability/tracing.ts';
import type { Caller } from '../auth/caller.ts';
import type { Gate, Passed } from '../auth/gate.ts';
import { afterResponse, CallReport, logUnsuccessful } from './call-report.ts';
import {
  DEFAULT_SETTLE_WRITES_MS,
  DEFAULT_SLOW_CALL_MS,
  type CallResult,
  type PipelineOptions,
  type RunContext,
  type ToolCall,
  type Work,
} from './call.ts';
import { runsLocally, type RequestScope } from './env.ts';
import { leaseLapsedBeforeStart, leaseWarning, writeUnconfirmed } from './execute.ts';
import { toolWork } from './tool-work.ts';
import { callIds, claimIdempotencyKey, type Claim } from './idempotency.ts';
import { linksFromEnv } from './link-templates.ts';
import { withQuerySignal } from './query-signal.ts';
import { DEFAULT_RETRIES, DEFAULT_RETRY_DELAY_MS, leavesWriteUnknown, withRetries } from './retry.ts';
import { roundToHundredths } from '../core/numbers.ts';

/**
 * Runs one tool call through the whole pipeline for the request's gate: the request's database
 * and Redis clients serve the call's admission, idempotency record and trace. Never throws.
 *
 * @example
 * const gate = await authorize(request, scope); // shared/http/authorize.ts
 * if (gate.ok) {
 *   const { outcome, meta } = await callTool(tool, call, gate, scope);
 * }
 */
export function callTool(
  tool: AnyTool,
  call: ToolCall,
  gate: Gate,
  scope: RequestScope,
  options: PipelineOptions = {},
): Promise<CallResult> {
  return runCall(toolWork(tool), call, gate, scope, options);
}

/**
 * Runs one call of `work` through the whole pipeline: the stages below run in turn over one
 * {@link CallState}; each either hands the call on or ends it with a refusal. Never throws.
 */
export async function runCall(
  work: Work,
  call: ToolCall,
  gate: Gate,
  scope: RequestScope,
  options: PipelineOptions = {},
): Promise<CallResult> {
  const state = startCall(work, call, gate, scope, options);
  const checked = await check(state);
  if ('outcome' in checked) return checked;
  const admitted = await admit(state, checked);
  if ('outcome' in admitted) return admitted;
  const execution = await run(state, checked, admitted);
  return finish(state, execution, checked, admitted);
}

/** One call as it moves through the stages: what it is, who asked, and how its answer is reported. */
interface CallState {
  work: Work;
  call: ToolCall;
  gate: Gate;
  scope: RequestScope;
  options: Required<PipelineOptions>;
  traceId: string;
  startedAt: number;
  report: CallReport;
  replayed?: true;
}

/** What the checks before admission established: the call may run, with this input. */
interface Checked {
  admission: Admission;
  /** As validated: what the idempotency key fingerprints and the trace records. */
  input: unknown;
  /** What the work runs with (the input as prepared, see {@link Work.prepare}). */
  prepared: unknown;
  links: Links;
  key?: string;
}

/** A claimed idempotency key: the call runs under it. */
type ClaimedKey = Extract<Claim, { replay?: undefined }>;

/** What the call holds once admitted: its slot (or none), its key's claim, and the gate it passed or will pass. */
interface Admit {
  admitted: Admitted;
  /** When the call got its slot (epoch ms, for the span). */
  admittedAtMs: number;
  claim?: ClaimedKey;
  /** Work that writes: the gate, passed. Other work: the confirmation its answer waits for. */
  passed?: Passed;
  confirmation?: Promise<Caller | Failure>;
}

/** What running the work came to. */
interface Execution {
  outcome: Outcome<unknown>;
  attempts: number;
  executionMs: number;
  lapse?: LeaseLapse;
  retryErrors: RetryError[];
}

function startCall(work: Work, call: ToolCall, gate: Gate, scope: RequestScope, options: PipelineOptions): CallState {
  const traceId = crypto.randomUUID();
  const report = new CallReport({
    work,
    traceId,
    arrivedAt: new Date(),
    traceparent: call.traceparent,
    toolCallId: call.toolCallId,
    gate,
    scope,
    parentExecutionId: call.parentExecutionId,
  });
  const resolved: Required<PipelineOptions> = {
    slowCallMs: options.slowCallMs ?? DEFAULT_SLOW_CALL_MS,
    retries: options.retries ?? DEFAULT_RETRIES,
    retryDelayMs: options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS,
    settleWritesMs: options.settleWritesMs ?? DEFAULT_SETTLE_WRITES_MS,
  };
  return { work, call, gate, scope, options: resolved, traceId, startedAt: performance.now(), report };
}

/** The meta of the call's envelope, as of now. */
function metaOf(state: CallState, attempts = 0, queuedMs = 0, executionMs = 0): Meta {
  return {
    tool: state.work.id,
    trace_id: state.traceId,
    duration_ms: roundToHundredths(performance.now() - state.startedAt),
    attempts,
    queued_ms: roundToHundredths(queuedMs),
    performance_warning: executionMs > state.options.slowCallMs,
    ...(state.replayed && { replayed: true }),
  };
}

/**
 * A refusal: it happens before execution, so attempts stays 0. A refusal for a credential that is
 * not valid now is not recorded: the credential no longer vouches for the project.
 */
function refuse(state: CallState, failure: Failure, projectId?: string): CallResult {
  logUnsuccessful('call_refused', failure, { tool: state.work.id, trace_id: state.traceId, project_id: projectId });
  return { outcome: failure, meta: metaOf(state) };
}

/**
 * A refusal that waits for the credential's confirmation: a credential revoked meanwhile gets why.
 * Otherwise the project is known, and the refusal is recorded for its metrics.
 */
async function refuseConfirmed(state: CallState, failure: Failure): Promise<CallResult> {
  const confirmed = await state.gate.confirm();
  if ('error' in confirmed) return refuse(state, confirmed);
  const refused = refuse(state, failure, confirmed.project.id);
  state.report.refused(failure, refused.meta.duration_ms);
  return refused;
}

/** Stage 1: the work is allowed and available, the key well formed, the input read and valid. */
async function check(state: CallState): Promise<Checked | CallResult> {
  const { work, call, gate, scope } = state;
  // The idempotency key the call was sent with, as read (unless the work ignores keys).
  const key = work.key === 'ignore' ? undefined : call.idempotencyKey;
  // Work outside the scope as last verified is judged again on the confirmed scope: a credential
  // widened meanwhile is not refused on its old toolsets.
  if (work.denied(gate.caller)) {
    const confirmed = await gate.confirm();
    if ('error' in confirmed) return refuse(state, confirmed);
    const denied = work.denied(confirmed);
    if (denied) return refuseConfirmed(state, denied);
  }
  if (key && !key.ok) return refuseConfirmed(state, key);
  if (work.unavailable) return refuseConfirmed(state, work.unavailable);
  const admission = admissionFromEnv(scope.env, { local: runsLocally(scope.env), redis: gate.redis });
  if ('ok' in admission) return refuseConfirmed(state, admission);
  const raw = await call.readInput(work.hint);
  if (!raw.ok) return refuseConfirmed(state, raw);
  state.report.received = raw.value;
  const input = validateInput(work.input, raw.value, work.hint);
  if (!input.ok) return refuseConfirmed(state, input);
  state.report.received = input.value;
  const prepared = work.prepare ? work.prepare(input.value) : { ok: true as const, value: input.value };
  if (!prepared.ok) return refuseConfirmed(state, prepared);
  const links = linksFromEnv(scope.env, call.origin, gate.caller.project.id);
  if (!links.ok) return refuseConfirmed(state, links);
  return { admission, input: input.value, prepared: prepared.value, links: links.links, ...(key?.ok && { key: key.value }) };
}

/**
 * Stage 2, all at once (the round trips overlap): the gate (passed before work that writes, a
 * confirmation for the rest), the idempotency key's claim (work that claims keys, sent with one),
 * and admission: the rate limit and a slot of the global semaphore (or the rate limit alone). A
 * stored answer is replayed, once the credential is confirmed; a slot whose lease lapsed before
 * the work started is not used: the call did not run.
 */
async function admit(state: CallState, { admission, input, key }: Checked): Promise<Admit | CallResult> {
  const { work, call, gate, scope, traceId } = state;
  let queued = false;
  const gating: Promise<Passed | Failure> | undefined = work.writes ? gate.pass(work.denied) : undefined;
  const confirmation = work.writes ? undefined : gate.confirm(work.denied);
  const claiming =
    key !== undefined && work.key === 'claim'
      ? claimIdempotencyKey(gate.ledger, {
          projectId: gate.caller.project.id,
          toolId: work.id,
          key,
          input,
          traceId,
          defer: (later) => scope.waitUntil(afterResponse(later)),
        })
      : undefined;
  const [admitted, passed, claim] = await Promise.all([
    admission.admit({
      callId: traceId,
      keyId: gate.caller.keyId,
      rateLimitPerMinute: gate.caller.rateLimitPerMinute,
      signal: call.signal,
      slot: work.holdsSlot,
      onQueued: (queueDepth) => {
        queued = true;
        log('info', 'queued', { tool: work.id, trace_id: traceId, queue_depth: queueDepth });
      },
      waitUntil: scope.waitUntil,
    }),
    gating,
    claiming,
  ]);
  const claimed = claim && claim.ok && !claim.replay ? claim : undefined;
  const giveBack = () => {
    if (claimed) scope.waitUntil(claimed.release());
    if (admitted.ok) scope.waitUntil(admitted.permit.release());
  };
  if (passed && 'error' in passed) {
    giveBack();
    // Out of scope now (narrowed meanwhile) is recorded; a credential not valid now is not.
    return passed.error.code === 'PERMISSION_DENIED' ? refuseConfirmed(state, passed) : refuse(state, passed);
  }
  if (claim && !claim.ok) {
    giveBack();
    return refuse(state, claim, gate.caller.project.id);
  }
  if (claim?.replay) {
    giveBack();
    state.replayed = true;
    return { outcome: claim.replay.outcome, meta: { ...metaOf(state), trace_id: claim.replay.traceId } };
  }
  if (!admitted.ok) {
    giveBack();
    return refuseConfirmed(state, admitted);
  }
  if (queued) log('info', 'dequeued', { tool: work.id, trace_id: traceId, queued_ms: roundToHundredths(admitted.queuedMs) });
  const lapsedBefore = admitted.permit.lapse();
  if (lapsedBefore) {
    giveBack();
    return refuseConfirmed(state, leaseLapsedBeforeStart(lapsedBefore));
  }
  return {
    admitted,
    admittedAtMs: Date.now(),
    ...(claimed && { claim: claimed }),
    ...(passed && { passed }),
    ...(confirmation && { confirmation }),
  };
}

/**
 * Stage 3: the work runs, with retries, holding its slot; the slot is released (off the answer's
 * path) whatever happens. A write holds its slot while it settles: it is still executing, and the
 * limit counts executions. Work that does not write runs alongside the credential's confirmation,
 * and its outcome waits for it.
 */
async function run(
  state: CallState,
  { input, prepared, links, key }: Checked,
  { admitted, claim, passed, confirmation }: Admit,
): Promise<Execution> {
  const { work, call, gate, scope, traceId, options } = state;
  const retryErrors: RetryError[] = [];
  const startedAt = performance.now();
  let reported = -Infinity;
  try {
    const context: RunContext = {
      db: passed ? passed.db : gate.reader,
      caller: passed ? passed.caller : gate.caller,
      gate,
      call,
      scope,
      options,
      traceId,
      childTraceparent: state.report.childTraceparent(),
      links,
      ...(key !== undefined && { key }),
      idFor: claim ? claim.idFor : callIds(gate.caller.project.id, work.id, traceId, input),
      // Only values that increase are passed on: a retried attempt restarting from zero is not reported until it passes what was.
      progress: (done, total, message) => {
        if (!call.onProgress || !(done > reported)) return;
        reported = done;
        call.onProgress({ progress: done, ...(total !== undefined && { total }), ...(message !== undefined && { message }) });
      },
      markReplayed: () => (state.replayed = true),
    };
    // Aborted when the caller goes away (never on a lapsed lease: see leaseWarning): the work's
    // statements too, sent within withQuerySignal; the trace, written after the answer, is outside it.
    const attempt = () => withQuerySignal(call.signal, () => work.run(prepared, context));
    const retried = work.retries
      ? await withRetries(attempt, {
          retries: options.retries,
          delayMs: options.retryDelayMs,
          settleMs: work.key === 'claim' ? options.settleWritesMs : 0,
          signal: call.signal,
          onRetry: (number, failure) => {
            retryErrors.push({
              attempt: number - 1,
              code: failure.error.code,
              message: failure.error.message,
              timeMs: Date.now(),
              cause: describeCause(failure.cause),
            });
            log('warn', 'retrying', {
              tool: work.id,
              trace_id: traceId,
              attempt: number,
              code: failure.error.code,
              error: errorForLog(failure.cause),
            });
          },
        })
      : { outcome: await attempt(), attempts: 1 };
    const { attempts } = retried;
    let { outcome } = retried;
    if (work.key === 'claim' && !outcome.ok && leavesWriteUnknown(outcome)) {
      outcome = writeUnconfirmed(outcome, { key: key ?? traceId, callersKey: key !== undefined });
    }
    const confirmed = confirmation && (await confirmation);
    if (confirmed && 'error' in confirmed) outcome = confirmed;
    const lapse = admitted.permit.lapse();
    return { outcome, attempts, executionMs: performance.now() - startedAt, retryErrors, ...(lapse && { lapse }) };
  } finally {
    scope.waitUntil(admitted.permit.release());
  }
}

/**
 * Stage 4: the answer's meta and warnings, the logs of a lost lease, a failure or a slow execution;
 * after the answer, the key's stored answer and the trace.
 */
function finish(
  state: CallState,
  { outcome, attempts, executionMs, lapse, retryErrors }: Execution,
  { input }: Checked,
  { admitted, admittedAtMs, claim }: Admit,
): CallResult {
  const { work, gate, scope, traceId, options } = state;
  const projectId = gate.caller.project.id;
  const warnings = lapse ? [leaseWarning(lapse)] : undefined;
  if (lapse)
    log('warn', 'lease_lost', {
      tool: work.id,
      trace_id: traceId,
      project_id: projectId,
      reason: lapse.reason,
      detail: lapse.detail,
      ok: outcome.ok,
    });
  // Stored after the answer: a repeat that arrives before it lands waits for it (shared/runtime/idempotency.ts).
  if (claim) scope.waitUntil(claim.settle(outcome));
  if (!outcome.ok) logUnsuccessful('call_failed', outcome, { tool: work.id, trace_id: traceId, project_id: projectId, attempts });

  const meta = { ...metaOf(state, attempts, admitted.queuedMs, executionMs), ...(warnings && { warnings }) };
  if (meta.performance_warning) {
    log('warn', 'slow_execution', {
      tool: work.id,
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
    admittedAtMs,
  });
  return { outcome, meta };
}
