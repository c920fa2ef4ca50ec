/**
 * One code-mode execution, for a caller already authorised: the agent's code is read and
 * instrumented (./guard.ts), run in the sandbox worker (./sandbox.ts), and every `tools[...]()` it
 * makes is a real call through the pipeline under the caller's scope (./dispatcher.ts); the answer
 * is one envelope whose data is what the code returned, the calls it made and what it logged.
 *
 * The execution holds no slot of the global semaphore: only its tool calls do, each while it runs,
 * at most `concurrentInnerCalls` of them at once. So executions waiting for slots never hold any,
 * and any number of them cannot deadlock the cap.
 *
 * This is the one module of code mode that uses the caller and the pipeline (`callTool`).
 */
import { DEFAULT_BODY_LIMIT_BYTES, screenInput, type Parsed } from '../core/body.ts';
import { fail, ok, type Failure, type Meta, type Outcome } from '../core/contract.ts';
import type { AnyTool } from '../core/tool.ts';
import { validateInput } from '../core/validation.ts';
import { exportSpan, otlpConfigFromEnv } from '../observability/otlp.ts';
import { recordRefusal } from '../observability/refusals.ts';
import { childTraceparent, startSpan, type SpanContext } from '../observability/trace-context.ts';
import { recordExecution } from '../observability/tracing.ts';
import type { Authorized } from '../auth/authorize.ts';
import { confirmedFor, deniedTool } from '../auth/caller.ts';
import { afterResponse, logUnsuccessful } from '../runtime/call-report.ts';
import type { RequestScope } from '../runtime/env.ts';
import { innerCallKey } from '../runtime/idempotency.ts';
import { callTool, DEFAULT_SLOW_CALL_MS, type CallResult, type PipelineOptions } from '../runtime/pipeline.ts';
import { InnerCalls, type InnerCallEntry } from './dispatcher.ts';
import { CODE_TOOL_ID, codeModeNotConfigured, sandboxOf } from './enabled.ts';
import { prepareCode } from './guard.ts';
import { CODE_MODE_LIMITS, STOPPING_LIMITS, type StoppingLimit } from './limits.ts';
import { CODE_EXAMPLE, codeInput } from './schemas.ts';
import { runInSandbox, type SandboxEnd } from './sandbox.ts';
import { TOO_DEEP_MARKER } from './cut-json.ts';

const HINT = `Example of a valid body: ${JSON.stringify({ code: CODE_EXAMPLE })}`;

/** One execution as a transport hands it over: what was sent, read the transport's way. */
export interface CodeRequest {
  /** Reads and screens the body (HTTP) or the arguments (MCP): `{ code }`; `hint` is an example of a valid one. */
  readInput(hint: string): Promise<Parsed<Record<string, unknown>>>;
  /** The execution's idempotency key, if one was sent: each write the code makes gets a key derived from it. */
  idempotencyKey?: Parsed<string>;
  traceparent?: string | null;
  /** Aborts when the caller goes away: the calls the code makes are aborted too. */
  signal: AbortSignal;
  /** The origin the request came to: links in the tools' answers are absolute. */
  origin: string;
}

/**
 * Runs an agent's code for `caller`, its calls going to `tools` (those outside the caller's scope
 * are refused by the pipeline, as they are when called directly). Never throws.
 */
export async function runCode(
  tools: readonly AnyTool[],
  request: CodeRequest,
  caller: Authorized,
  scope: RequestScope,
  options: PipelineOptions = {},
): Promise<CallResult> {
  const traceId = crypto.randomUUID();
  const arrivedAt = new Date();
  const startedAt = performance.now();
  const slowCallMs = options.slowCallMs ?? DEFAULT_SLOW_CALL_MS;
  const span = startSpan(traceId, request.traceparent);
  const meta = (attempts = 0): Meta => {
    const durationMs = Math.round((performance.now() - startedAt) * 100) / 100;
    return {
      tool: CODE_TOOL_ID,
      trace_id: traceId,
      duration_ms: durationMs,
      attempts,
      queued_ms: 0,
      performance_warning: attempts > 0 && durationMs > slowCallMs,
    };
  };
  const report = { traceId, arrivedAt, span, caller, scope };
  const refuse = async (failure: Failure): Promise<CallResult> => {
    const revoked = await confirmedFor(caller);
    if (revoked) return { outcome: revoked, meta: meta() };
    const answered = { outcome: failure, meta: meta() };
    logUnsuccessful('call_refused', failure, { tool: CODE_TOOL_ID, trace_id: traceId, project_id: caller.project.id });
    reportRefusal(report, failure, answered.meta.duration_ms);
    return answered;
  };

  const sandbox = sandboxOf(scope.env);
  if (!sandbox) return refuse(codeModeNotConfigured());
  const raw = await request.readInput(HINT);
  if (!raw.ok) return refuse(raw);
  const input = validateInput(codeInput, raw.value, HINT);
  if (!input.ok) return refuse(input);
  const guard = `__guard_${crypto.randomUUID().replace(/-/g, '')}`;
  const prepared = prepareCode(input.value.code, guard);
  if (!prepared.ok) return refuse(prepared);
  const key = request.idempotencyKey;
  if (key && !key.ok) return refuse(key);
  // The gate, before anything runs: the calls inside pass it again each, on the refreshed scope.
  const revoked = await confirmedFor(caller);
  if (revoked) return { outcome: revoked, meta: meta() };

  const innerTraceparent = childTraceparent(span);
  const calls = new InnerCalls({
    tools,
    callable: (tool) => !deniedTool(caller, tool),
    maxCalls: CODE_MODE_LIMITS.innerCalls,
    maxConcurrent: CODE_MODE_LIMITS.concurrentInnerCalls,
    maxInputChars: DEFAULT_BODY_LIMIT_BYTES,
    run: async (tool, value, position) =>
      callTool(
        tool,
        {
          readInput: async (hint) => screenInput(value, hint),
          signal: request.signal,
          idempotencyKey:
            key && tool.acceptsIdempotencyKey ? { ok: true, value: await innerCallKey(key.value, position, tool.id, value) } : undefined,
          traceparent: innerTraceparent,
          origin: request.origin,
          parentExecutionId: traceId,
        },
        caller,
        scope,
        options,
      ),
  });
  const end = await runInSandbox(sandbox, { source: prepared.source, guard, calls });
  calls.close();
  if (end.ok) calls.overLimit += end.callsRefused;
  // Calls the code did not await are real calls, and may be writing: the answer lists them once they answered.
  await settleWithin(calls, CODE_MODE_LIMITS.wallTimeMs);

  const outcome = outcomeOf(end, calls);
  const answerMeta = meta(1);
  const writes = calls.entries.filter((entry) => entry.success && tools.find((tool) => tool.id === entry.tool)?.acceptsIdempotencyKey);
  if (key && writes.length > 0 && writes.every((entry) => entry.replayed)) answerMeta.replayed = true;
  if (!outcome.ok)
    logUnsuccessful('call_failed', outcome, { tool: CODE_TOOL_ID, trace_id: traceId, project_id: caller.project.id, attempts: 1 });
  reportExecution(report, input.value, outcome, answerMeta);
  return { outcome, meta: answerMeta };
}

/** The execution's outcome from how the sandbox ended and the calls made. */
function outcomeOf(end: SandboxEnd, calls: InnerCalls): Outcome<unknown> {
  const made = { calls: calls.entries, ...(calls.overLimit > 0 && { calls_refused: calls.overLimit }) };
  const summary = callSummary(calls.entries);
  if (!end.ok) {
    if (end.reason === 'limit') return limitReached(end.limit, made, [], end.message);
    if (end.reason === 'busy')
      return fail('BUSY', `The code did not run: ${end.message}. ${summary} Retry in a few seconds.`, {
        retryable: true,
        details: { reason: 'sandbox_unavailable', retry_after_ms: 2_000, ...made },
      });
    return fail('UNKNOWN_ERROR', `The sandbox running the code failed: ${end.message}. ${summary}`, {
      details: { reason: 'sandbox_failed', ...made },
    });
  }
  const { answer } = end;
  const logs = { logs: answer.logs, ...(answer.logsDropped > 0 && { logs_dropped: answer.logsDropped }) };
  if (answer.stopped) return limitReached(answer.stopped, made, answer.logs);
  if (answer.error) {
    const { name, message } = answer.error;
    return fail('VALIDATION_ERROR', `The code threw ${name}: ${message.replace(/\.$/, '')}. ${summary}`, {
      hint: 'Tool calls return envelopes and never throw: check `success` before reading `data`. Fix the code and send it again.',
      details: { reason: 'code_threw', exception: answer.error, ...made, ...logs },
    });
  }
  const { value, chars, cut, tooDeep } = answer.result!;
  const ran = `The code ran: ${callCount(calls.entries)}.`;
  const why = [
    chars > CODE_MODE_LIMITS.resultChars && `its result was ${chars} characters of JSON, cut to about ${CODE_MODE_LIMITS.resultChars}`,
    tooDeep && `values nested deeper than ${CODE_MODE_LIMITS.resultDepth} levels were replaced by "${TOO_DEEP_MARKER}"`,
  ].filter(Boolean);
  const message = cut
    ? `${ran} Its result was cut: ${why.join('; ') || 'it was larger than the answer keeps'} (the cuts are marked "--- TRUNCATED"). Return only the fields you need, or page through the data over several executions.`
    : ran;
  return ok({ result: value, ...made, ...logs }, message, cut ? { truncated: true } : {});
}

/** What reaching each bound says, for a failure's message. */
const STOPPED_BECAUSE: Record<StoppingLimit, string> = {
  wall_time_ms: `The code ran longer than ${CODE_MODE_LIMITS.wallTimeMs} ms, the most one execution may take`,
  cpu_ms: `The code used more than ${CODE_MODE_LIMITS.cpuMs} ms of CPU time, the most one execution may use`,
  memory_mb: `The code's sandbox ran out of memory (${CODE_MODE_LIMITS.memoryMb} MB, the most one execution may use)`,
  guard_ticks: `The code ran more than ${CODE_MODE_LIMITS.guardTicks} loop iterations and function calls, the most one execution may run (an endless loop or runaway recursion?)`,
  blocking_ms: `The code ran for ${CODE_MODE_LIMITS.blockingMs} ms without letting anything else run (a loop, or a long builtin call such as a regular expression, that never awaits a tool call or a timer)`,
};

/** A bound of code mode reached: the failure names it (`details.limit`, `details.value`) and lists what the code did before. */
function limitReached(limit: StoppingLimit, made: { calls: InnerCallEntry[] }, logs: string[], cause?: string): Failure {
  const why = cause ? ` (${cause})` : '';
  return fail('VALIDATION_ERROR', `${STOPPED_BECAUSE[limit]}, so it was stopped (limit ${limit})${why}. ${callSummary(made.calls)}`, {
    hint: 'Do less in one execution: fewer iterations, fewer or smaller calls, smaller values; split the work over several executions.',
    details: { reason: 'code_limit', limit, value: STOPPING_LIMITS[limit], ...made, logs },
  });
}

/** The calls a failed execution made, for its message: they are in `error.details.calls`. */
function callSummary(entries: readonly InnerCallEntry[]): string {
  if (entries.length === 0) return 'It made no tool calls.';
  return `It made ${callCount(entries)} (error.details.calls lists them, each with its trace id).`;
}

/** How many tool calls were made and how many failed: "4 tool calls, 1 failed". */
function callCount(entries: readonly InnerCallEntry[]): string {
  const failed = entries.filter((entry) => !entry.success).length;
  return `${entries.length} tool call${entries.length === 1 ? '' : 's'}${failed ? `, ${failed} failed` : ''}`;
}

/** Waits for the calls still running, at most `ms`. */
async function settleWithin(calls: InnerCalls, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([calls.settled(), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

interface Report {
  traceId: string;
  arrivedAt: Date;
  span: SpanContext;
  caller: Authorized;
  scope: RequestScope;
}

/** The execution's trace row and span, after the answer. */
function reportExecution({ traceId, arrivedAt, span, caller, scope }: Report, input: unknown, outcome: Outcome<unknown>, meta: Meta): void {
  scope.waitUntil(
    afterResponse(() =>
      Promise.all([
        recordExecution(caller.db, {
          traceId,
          tool: CODE_TOOL_ID,
          projectId: caller.project.id,
          input,
          outcome,
          durationMs: meta.duration_ms,
          attempts: 1,
          queuedMs: 0,
          performanceWarning: meta.performance_warning,
          warnings: [],
          startedAt: arrivedAt,
          apiKeyId: caller.keyId,
          retryErrors: [],
          span,
        }),
        exportExecutionSpan({ traceId, arrivedAt, span, caller, scope }, outcome, meta.duration_ms, false),
      ]),
    ),
  );
}

/** A refused execution's refusal row and span, after the answer. */
function reportRefusal(report: Report, failure: Failure, durationMs: number): void {
  const { traceId, arrivedAt, caller, scope } = report;
  scope.waitUntil(
    afterResponse(() =>
      Promise.all([
        recordRefusal(caller.db, {
          traceId,
          projectId: caller.project.id,
          apiKeyId: caller.keyId,
          tool: CODE_TOOL_ID,
          failure,
          startedAt: arrivedAt,
        }),
        exportExecutionSpan(report, failure, durationMs, true),
      ]),
    ),
  );
}

async function exportExecutionSpan(
  { traceId, arrivedAt, span, caller, scope }: Report,
  outcome: Outcome<unknown>,
  durationMs: number,
  refused: boolean,
): Promise<void> {
  const otlp = otlpConfigFromEnv(scope.env);
  if (!otlp) return;
  await exportSpan(otlp, {
    context: span,
    tool: CODE_TOOL_ID,
    toolDescription: 'Code mode: an agent-written function whose tool calls are child spans.',
    executionId: traceId,
    projectId: caller.project.id,
    startTimeMs: arrivedAt.getTime(),
    durationMs,
    errorCode: outcome.ok ? undefined : outcome.error.code,
    errorMessage: outcome.ok ? undefined : outcome.error.message,
    refused,
    attempts: refused ? 0 : 1,
    queuedMs: 0,
    performanceWarning: false,
    retries: [],
  });
}
