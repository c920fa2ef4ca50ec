/**
 * Running a tool once, and what a failure means for its caller: anything a tool throws, and any
 * output that breaks its schema, becomes a failure of the contract; a slot's lease that lapsed
 * becomes a warning (while the tool ran) or a refusal (before it started).
 */
import { fail, FailureError, type Failure, type Outcome, type Warning } from '../core/contract.ts';
import type { AnyTool, ToolContext } from '../core/tool.ts';
import type { LeaseLapse } from '../concurrency/semaphore.ts';
import { ProviderError, providerFailure } from '../providers/types.ts';
import { databaseFailure } from './db.ts';

/** Runs `tool.execute`, turning anything thrown and any output that breaks the schema into a failure. */
export async function execute(tool: AnyTool, input: unknown, context: ToolContext): Promise<Outcome<unknown>> {
  let outcome: Outcome<unknown>;
  try {
    outcome = await tool.execute(input, context);
  } catch (error) {
    outcome = failureOf(error, context.traceId);
  }
  if (!outcome.ok) return outcome;
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

/** An error nobody anticipated: the caller learns the trace id, the trace keeps the stack. */
export function unexpected(error: unknown, traceId: string): Failure {
  return fail('UNKNOWN_ERROR', `The tool failed unexpectedly. The error was recorded with trace id ${traceId}; repeating the same call is unlikely to help.`, {
    cause: error,
  });
}

/**
 * The slot's lease lapsed while the tool ran, so another call may have run in its place: the limit
 * was possibly exceeded, and that can no longer be undone. The tool is never stopped for it (work
 * stopped half-way would be reported failed although partly written): its answer stands, with this
 * warning, the `lease_lost` log event and the trace of the call.
 */
export function leaseWarning(lapse: LeaseLapse): Warning {
  return { code: 'lease_lost', message: `The execution slot could not be vouched for while the tool ran (${lapse.detail}); the limit on concurrent executions may have been exceeded. The answer is the tool's own: its work is done.` };
}

/** The slot's lease lapsed between the grant and the start: the tool did not run. */
export function leaseLapsedBeforeStart(lapse: LeaseLapse): Failure {
  return fail('BUSY', `The execution slot was lost before the tool started (${lapse.detail}), so the call did not run. Repeat it in a moment.`, {
    retryable: true,
    details: { reason: 'lease_lost', retry_after_ms: 1_000 },
  });
}
