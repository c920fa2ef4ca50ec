/**
 * What is kept of a call besides its answer, written once for every transport: one log line for
 * each unsuccessful call, a refusal row or an execution row (with its counters), and an OTLP span
 * when an exporter is configured. Rows and spans are written after the answer is out.
 */
import { statusOf, type Failure, type Outcome } from '../core/contract.ts';
import { log } from '../core/log.ts';
import { exportSpan, otlpConfigFromEnv, type ExecutionSpan } from '../observability/otlp.ts';
import { recordRefusal } from '../observability/refusals.ts';
import { childTraceparent, startSpan } from '../observability/trace-context.ts';
import { recordExecution, type ExecutionRecord } from '../observability/tracing.ts';
import type { Gate } from '../auth/gate.ts';
import type { RequestScope } from './env.ts';

/** Who and what a report is about: the call's tool, trace and caller. */
export interface CallReportOptions {
  /** What the call ran: a tool, or code mode's execution (its id and description name the span). */
  work: { id: string; description: string };
  traceId: string;
  /** When the call arrived: the rows' and the span's start. */
  arrivedAt: Date;
  /** The caller's W3C `traceparent`, if any: the span joins the caller's trace. */
  traceparent?: string | null;
  /** The model's own id of this tool call: the span's `gen_ai.tool.call.id`. */
  toolCallId?: string;
  /** The request's gate: its caller names the project and key; its ledger takes the rows. */
  gate: Gate;
  scope: RequestScope;
  /** For a call made by code mode's code: the trace id of that code's execution (its rows link to it). */
  parentExecutionId?: string;
}

/** What an execution adds to its row and span, besides the outcome. */
export type ExecutionFacts = Pick<
  ExecutionRecord,
  'input' | 'outcome' | 'durationMs' | 'attempts' | 'queuedMs' | 'performanceWarning' | 'warnings' | 'retryErrors'
> & {
  /** Unix milliseconds when the call got its slot: the span's queue-wait event. */
  admittedAtMs: number;
};

/** The report of one call of a known project: every call is exported, refusals too. */
export class CallReport {
  /** The arguments as received, then as validated: what the span carries as the call's content. */
  received: unknown;
  readonly #options: CallReportOptions;
  readonly #span;
  readonly #otlp;

  constructor(options: CallReportOptions) {
    this.#options = options;
    this.#span = startSpan(options.traceId, options.traceparent);
    this.#otlp = otlpConfigFromEnv(options.scope.env);
  }

  /** The `traceparent` that makes a call made during this one (code mode's) a child of its span. */
  childTraceparent(): string {
    return childTraceparent(this.#span);
  }

  /** A call refused before it executed: its refusal row (counted in the metrics) and its span, after the answer. */
  refused(failure: Failure, durationMs: number): void {
    const { work, traceId, arrivedAt, gate, scope, parentExecutionId } = this.#options;
    const { caller } = gate;
    const record = {
      traceId,
      projectId: caller.project.id,
      apiKeyId: caller.keyId,
      tool: work.id,
      failure,
      startedAt: arrivedAt,
      parentExecutionId,
    };
    scope.waitUntil(
      afterResponse(() => Promise.all([recordRefusal(gate.ledger, record), this.#send({ outcome: failure, durationMs, refused: true })])),
    );
  }

  /** A call that executed: its execution row and its span, after the answer. */
  executed({ admittedAtMs, ...facts }: ExecutionFacts): void {
    const { work, traceId, arrivedAt, gate, scope, parentExecutionId } = this.#options;
    const { caller } = gate;
    scope.waitUntil(
      afterResponse(() =>
        Promise.all([
          recordExecution(gate.ledger, {
            ...facts,
            traceId,
            tool: work.id,
            projectId: caller.project.id,
            startedAt: arrivedAt,
            apiKeyId: caller.keyId,
            span: this.#span,
            parentExecutionId,
          }),
          this.#send({
            outcome: facts.outcome,
            durationMs: facts.durationMs,
            refused: false,
            attempts: facts.attempts,
            queuedMs: facts.queuedMs,
            admittedAtMs,
            performanceWarning: facts.performanceWarning,
            retries: facts.retryErrors,
          }),
        ]),
      ),
    );
  }

  async #send(sent: Pick<ExecutionSpan, 'durationMs' | 'refused'> & Partial<ExecutionSpan> & { outcome: Outcome<unknown> }): Promise<void> {
    if (!this.#otlp) return;
    const { work, traceId, arrivedAt, toolCallId, gate } = this.#options;
    const { outcome, ...rest } = sent;
    await exportSpan(this.#otlp, {
      context: this.#span,
      tool: work.id,
      toolDescription: work.description,
      executionId: traceId,
      toolCallId,
      projectId: gate.caller.project.id,
      startTimeMs: arrivedAt.getTime(),
      errorCode: outcome.ok ? undefined : outcome.error.code,
      errorMessage: outcome.ok ? undefined : outcome.error.message,
      attempts: 0,
      queuedMs: 0,
      performanceWarning: false,
      retries: [],
      content: {
        arguments: this.received ?? null,
        result: outcome.ok ? outcome.data : { code: outcome.error.code, message: outcome.error.message, details: outcome.error.details },
      },
      ...rest,
    });
  }
}

/**
 * The one place where unsuccessful calls are logged, one structured line each: `call_refused` for
 * a call answered without executing (validation with its failing fields, rate limit, no slot,
 * authentication, ...), `call_failed` for an execution that failed after its retries. A warning,
 * or an error when the failure is the service's (5xx). The line names the record the failure is
 * about (`entity_type` and the ids among its details, such as a DOCUMENT_DELETED's `document_id`).
 */
export function logUnsuccessful(event: 'call_refused' | 'call_failed', failure: Failure, context: Record<string, unknown>): void {
  const status = statusOf(failure);
  const { code, retryable, details } = failure.error;
  const fields = details?.fields?.map(({ field, code: problem }) => ({ field, code: problem }));
  // The record the failure is about (a DOCUMENT_DELETED's document, a NOT_FOUND's entity), by id only.
  const about = Object.entries(details ?? {}).filter(
    ([key, value]) => (key === 'entity_type' || key.endsWith('_id')) && (typeof value === 'string' || typeof value === 'number'),
  );
  log(status >= 500 ? 'error' : 'warn', event, {
    ...Object.fromEntries(about),
    ...context,
    code,
    status,
    retryable,
    ...(fields ? { fields } : {}),
  });
}

/** Runs `work` in a later task, so that building and sending what it writes happens after the answer is out. */
export function afterResponse(work: () => Promise<unknown>): Promise<unknown> {
  return new Promise((resolve) => setTimeout(resolve, 0)).then(work);
}
