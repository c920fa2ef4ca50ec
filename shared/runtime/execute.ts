/**
 * Running a tool once, and what a failure means for its caller: anything a tool throws, and any
 * output that breaks its schema, becomes a failure of the contract; a slot's lease that lapsed
 * becomes a warning (while the tool ran) or a refusal (before it started).
 */
import { fail, FailureError, type Failure, type Outcome, type Warning } from '../core/contract.ts';
import type { AnyTool, ToolContext } from '../core/tool.ts';
import type { LeaseLapse } from '../concurrency/semaphore.ts';
import { ProviderError, providerFailure } from '../providers/types.ts';
import { databaseFailure } from '../core/database.ts';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_META_KEY } from '../core/idempotency-key.ts';

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
  return fail(
    'UNKNOWN_ERROR',
    `The tool '${tool.id}' produced a result that does not match its declared output; this is a bug in the tool, recorded with trace id ${context.traceId}.`,
    {
      cause: checked.error,
    },
  );
}

/** What a thrown error means for the caller: a carried failure, a provider or database failure, or a bug. */
function failureOf(error: unknown, traceId: string): Failure {
  if (error instanceof FailureError) return error.failure;
  if (error instanceof ProviderError) return providerFailure(error);
  return databaseFailure(error) ?? unexpected(error, traceId);
}

/** An error nobody anticipated: the caller learns the trace id, the trace keeps the stack. */
export function unexpected(error: unknown, traceId: string): Failure {
  return fail(
    'UNKNOWN_ERROR',
    `The tool failed unexpectedly. The error was recorded with trace id ${traceId}; repeating the same call is unlikely to help.`,
    {
      cause: error,
    },
  );
}

/**
 * The slot's lease lapsed while the tool ran, so another call may have run in its place: the limit
 * was possibly exceeded, and that can no longer be undone. The tool is never stopped for it (work
 * stopped half-way would be reported failed although partly written): its answer stands, with this
 * warning, the `lease_lost` log event and the trace of the call.
 */
export function leaseWarning(lapse: LeaseLapse): Warning {
  return {
    code: 'lease_lost',
    message: `The execution slot could not be vouched for while the tool ran (${lapse.detail}); the limit on concurrent executions may have been exceeded. The answer is the tool's own: its work is done.`,
  };
}

/** The slot's lease lapsed between the grant and the start: the tool did not run. */
export function leaseLapsedBeforeStart(lapse: LeaseLapse): Failure {
  return fail(
    'BUSY',
    `The execution slot was lost before the tool started (${lapse.detail}), so the call did not run. Repeat it in a moment.`,
    {
      retryable: true,
      details: { reason: 'lease_lost', retry_after_ms: 1_000 },
    },
  );
}

/** How long an agent is told to wait before repeating a write the database left unconfirmed. */
const UNCONFIRMED_RETRY_AFTER_MS = 30_000;

/**
 * A write whose retries, and the settling after them, ended with the database still not
 * answering: what it wrote is not confirmed. The answer says so and names the key under which
 * the same call, repeated, completes or recognises this call's writes, since its ids derive from
 * that key: the caller's own Idempotency-Key, or the trace id of a call sent without one.
 * Retryable only with the caller's own key: repeated as sent, a call without one could write a
 * second copy.
 */
export function writeUnconfirmed(failure: Failure, { key, callersKey }: { key: string; callersKey: boolean }): Failure {
  const quoted = JSON.stringify(key);
  return fail(
    'DATABASE_ERROR',
    `The database stopped answering while this call was writing and had not answered again when the call ended, so what it wrote is not confirmed. Apologise briefly to the user and suggest trying again in ${UNCONFIRMED_RETRY_AFTER_MS / 1000} s: repeat this same call, same input, with the idempotency key ${quoted}, which completes or recognises this call's writes and answers what was written, never a second copy${callersKey ? '' : ' (without that key, a repeat could write a second copy)'}.`,
    {
      hint: `Send the same input again with the header ${IDEMPOTENCY_HEADER}: ${quoted} (MCP: _meta "${IDEMPOTENCY_META_KEY}").`,
      retryable: callersKey,
      ...(callersKey && { status: 503 }),
      details: { ...failure.error.details, reason: 'write_unconfirmed', idempotency_key: key, retry_after_ms: UNCONFIRMED_RETRY_AFTER_MS },
      cause: failure.cause,
    },
  );
}
