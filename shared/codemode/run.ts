/**
 * One code-mode execution, as a call of the pipeline (shared/runtime/pipeline.ts, `runCall`): the
 * agent's code is validated and read (./guard.ts), rate limited, gated and reported as any call is,
 * and run in the sandbox worker (./sandbox.ts); every `tools[...]()` it makes is a real call through the
 * pipeline (`callTool`) with the same gate, each passing it with the same freshness as a direct
 * call (./dispatcher.ts). The answer is one envelope whose data is what the code returned, the
 * calls it made and what it logged.
 *
 * The execution holds no slot of the global semaphore (it passes the rate limit only): its tool
 * calls do, each while it runs, at most `concurrentInnerCalls` of them at once. So executions
 * waiting for slots never hold any, and any number of them cannot deadlock the cap. It changes no
 * state itself: it runs alongside the credential's confirmation, and its calls that write pass the
 * gate each.
 *
 * This is the one module of code mode that uses the gate and the pipeline.
 */
import { DEFAULT_BODY_LIMIT_BYTES, screenInput } from '../core/body.ts';
import { fail, ok, type Failure, type Outcome } from '../core/contract.ts';
import type { AnyTool } from '../core/tool.ts';
import { TOOLSETS } from '../core/toolsets.ts';
import { deniedTool, deniedToolsets } from '../auth/caller.ts';
import type { Gate } from '../auth/gate.ts';
import type { RequestScope } from '../runtime/env.ts';
import { innerCallKey } from '../runtime/idempotency.ts';
import type { CallResult, PipelineOptions, RunContext, ToolCall, Work } from '../runtime/call.ts';
import { callTool, runCall } from '../runtime/pipeline.ts';
import { InnerCalls, type InnerCallEntry } from './dispatcher.ts';
import { CODE_TOOL_ID, codeModeNotConfigured, sandboxOf } from './enabled.ts';
import { prepareCode } from './guard.ts';
import { CODE_MODE_LIMITS, STOPPING_LIMITS, type StoppingLimit } from './limits.ts';
import { CODE_EXAMPLE, codeInput } from './schemas.ts';
import { runInSandbox, type SandboxEnd } from './sandbox.ts';
import { TOO_DEEP_MARKER } from './cut-json.ts';

const HINT = `Example of a valid body: ${JSON.stringify({ code: CODE_EXAMPLE })}`;

/** What its span says an execution is. */
const DESCRIPTION = 'Code mode: an agent-written function whose tool calls are child spans.';

/**
 * Runs an agent's code (the call's input, `{ code }`) for the request's gate, its calls going to
 * `tools` (those outside the caller's scope are refused by the pipeline, as they are when called
 * directly). Never throws.
 */
export function runCode(
  tools: readonly AnyTool[],
  call: ToolCall,
  gate: Gate,
  scope: RequestScope,
  options: PipelineOptions = {},
): Promise<CallResult> {
  return runCall(codeWork(tools, scope), call, gate, scope, options);
}

/** An execution of code calling `tools`, as the pipeline's work. */
function codeWork(tools: readonly AnyTool[], scope: RequestScope): Work {
  const sandbox = sandboxOf(scope.env);
  return {
    id: CODE_TOOL_ID,
    description: DESCRIPTION,
    input: codeInput,
    hint: HINT,
    // The code may run for any credential that reaches a toolset: each call it makes is judged on its own.
    denied: (caller) => deniedToolsets(caller, TOOLSETS, 'code mode'),
    writes: false,
    holdsSlot: false,
    key: 'forward',
    retries: false,
    ...(!sandbox && { unavailable: codeModeNotConfigured() }),
    prepare: (input) => {
      const guard = `__guard_${crypto.randomUUID().replace(/-/g, '')}`;
      const prepared = prepareCode((input as { code: string }).code, guard);
      return prepared.ok ? { ok: true, value: { source: prepared.source, guard } } : prepared;
    },
    run: async (prepared, context) => execute(tools, sandbox!, prepared as { source: string; guard: string }, context),
  };
}

/** Runs the prepared code in the sandbox, its calls through the pipeline, and answers how it went. */
async function execute(
  tools: readonly AnyTool[],
  sandbox: NonNullable<ReturnType<typeof sandboxOf>>,
  { source, guard }: { source: string; guard: string },
  context: RunContext,
): Promise<Outcome<unknown>> {
  const { gate, call, scope, options, traceId, childTraceparent, key, caller } = context;
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
          signal: call.signal,
          idempotencyKey:
            key !== undefined && tool.acceptsIdempotencyKey
              ? { ok: true, value: await innerCallKey(key, position, tool.id, value) }
              : undefined,
          traceparent: childTraceparent,
          origin: call.origin,
          parentExecutionId: traceId,
        },
        gate,
        scope,
        options,
      ),
  });
  const end = await runInSandbox(sandbox, { source, guard, calls });
  calls.close();
  if (end.ok) calls.overLimit += end.callsRefused;
  // Calls the code did not await are real calls, and may be writing: the answer lists them once they answered.
  await settleWithin(calls, CODE_MODE_LIMITS.wallTimeMs);
  const writes = calls.entries.filter((entry) => entry.success && tools.find((tool) => tool.id === entry.tool)?.acceptsIdempotencyKey);
  if (key !== undefined && writes.length > 0 && writes.every((entry) => entry.replayed)) context.markReplayed();
  return outcomeOf(end, calls);
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

/** Failed calls a failed execution's message names (the rest are in `error.details.calls`). */
const NAMED_FAILURES = 3;

/**
 * The calls a failed execution made, for its message: how many, and the first failed ones by
 * tool, error code and message, so that the model learns why even when the code threw without
 * looking at them; all of them are in `error.details.calls`.
 */
function callSummary(entries: readonly InnerCallEntry[]): string {
  if (entries.length === 0) return 'It made no tool calls.';
  const failed = entries.filter((entry) => !entry.success);
  const named = failed.slice(0, NAMED_FAILURES).map((entry) => `${entry.tool} answered ${entry.error_code}: ${entry.error_message}`);
  const more = failed.length > NAMED_FAILURES ? ` (and ${failed.length - NAMED_FAILURES} more)` : '';
  const why = named.length ? ` Failed: ${named.join(' | ')}${more}.` : '';
  return `It made ${callCount(entries)} (error.details.calls lists them, each with its trace id).${why}`;
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
