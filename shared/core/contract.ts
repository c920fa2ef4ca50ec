/**
 * The response contract: every answer on every route is one {@link ToolResult} envelope, so an
 * agent always gets either data or an error it can act on.
 *
 * Tools never build envelopes themselves: they return {@link ok} or {@link fail}, and the pipeline
 * wraps the outcome with {@link Meta}.
 */

/** Every error code, with the HTTP status it is answered with. */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  UNKNOWN_TOOL: 404,
  CONFLICT: 409,
  IDEMPOTENCY_MISMATCH: 422,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  BUSY: 503,
  DOCUMENT_DELETED: 409,
  DATABASE_ERROR: 500,
  CONFIG_ERROR: 500,
  UPSTREAM_ERROR: 502,
  METHOD_NOT_ALLOWED: 405,
  UNKNOWN_ERROR: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Codes whose failures may succeed when the same call is repeated later. */
const RETRYABLE_BY_DEFAULT: ReadonlySet<ErrorCode> = new Set(['RATE_LIMITED', 'BUSY']);

/** One problem with one input field. */
export interface FieldError {
  field: string;
  message: string;
  code: string;
  expected?: string;
  received?: string;
}

export interface ToolError {
  code: ErrorCode;
  /** Written for an LLM: what was wrong and what to do instead. */
  message: string;
  /** An example of a valid call, or the next step. */
  hint?: string;
  /** May the same call succeed later? */
  retryable: boolean;
  details?: {
    fields?: FieldError[];
    entity_type?: string;
    query?: Record<string, unknown>;
    constraint?: string;
    sqlstate?: string;
    /** RATE_LIMITED, BUSY and every other 429/503: how long to wait; the `Retry-After` header says the same in seconds. */
    retry_after_ms?: number;
    [key: string]: unknown;
  };
}

export interface Meta {
  tool: string;
  trace_id: string;
  duration_ms: number;
  attempts: number;
  queued_ms: number;
  performance_warning: boolean;
  truncated?: boolean;
  /** True when the answer is the stored answer of an earlier call with the same idempotency key. */
  replayed?: boolean;
  /** Facts about a call that did its work, worth knowing but not a failure (e.g. `lease_lost`, `rounded`). */
  warnings?: Warning[];
}

/**
 * Something that happened to a call that still did its work.
 * - `lease_lost`: the execution slot's lease could not be renewed (or was taken back) while the
 *   tool ran, so the limit on concurrent executions may have been exceeded meanwhile; the tool's
 *   answer stands, the work is done.
 * - `rounded`: a number had more decimals than its column keeps; `field` was `received` and is
 *   `stored` (e.g. weight_kg 61.555 stored as 61.56). One warning per rounded field.
 */
export interface Warning {
  code: 'lease_lost' | 'rounded';
  message: string;
  field?: string;
  received?: number;
  stored?: number;
}

export interface Link {
  label: string;
  url: string;
}

export type ToolResult<T> =
  | { success: true; message: string; data: T; links?: Link[]; meta: Meta }
  | { success: false; message: string; error: ToolError; meta: Meta };

/** What a tool's `execute` returns when it succeeds. */
export interface Success<T> {
  ok: true;
  data: T;
  message: string;
  links?: Link[];
  truncated?: boolean;
  /** Said in the answer's `meta.warnings`, after the pipeline's own. */
  warnings?: Warning[];
}

/** What a tool's `execute` (or any pipeline step) returns when it fails. */
export interface Failure {
  ok: false;
  error: ToolError;
  /** Overrides the code's default status (DATABASE_ERROR is 503 when transient). */
  status?: number;
  /** Kept for the trace only; never sent to the caller. */
  cause?: unknown;
}

export type Outcome<T> = Success<T> | Failure;

/** A successful outcome: the data, a one-line summary for the agent, and optional extras. */
export function ok<T>(data: T, message: string, extras: Pick<Success<T>, 'links' | 'truncated' | 'warnings'> = {}): Success<T> {
  return { ok: true, data, message, ...extras };
}

export interface FailOptions {
  hint?: string;
  retryable?: boolean;
  details?: ToolError['details'];
  status?: number;
  cause?: unknown;
}

/**
 * A failed outcome. `retryable` defaults to true only for RATE_LIMITED and BUSY.
 *
 * @example
 * return fail('NOT_FOUND', "No task with id 't_9' exists in this project.", {
 *   hint: 'Call semantic-search to find task ids.',
 *   details: { entity_type: 'task', query: { task_id: 't_9' } },
 * });
 */
export function fail(code: ErrorCode, message: string, options: FailOptions = {}): Failure {
  const error: ToolError = {
    code,
    message,
    retryable: options.retryable ?? RETRYABLE_BY_DEFAULT.has(code),
  };
  if (options.hint !== undefined) error.hint = options.hint;
  if (options.details !== undefined) error.details = options.details;
  const failure: Failure = { ok: false, error };
  if (options.status !== undefined) failure.status = options.status;
  if (options.cause !== undefined) failure.cause = options.cause;
  return failure;
}

/** Ids named in a NOT_FOUND message at most; details carry them all. */
const MAX_NAMED_IDS = 10;

/**
 * NOT_FOUND for ids the project does not have, worded the same by every tool and route. Another
 * project's ids get exactly this answer: nothing tells them apart from ids that never existed.
 * `query` is the input that named them (`{ task_ids: [...] }`, `{ document_id: '...' }`).
 *
 * @example
 * notFound('task', { task_ids: ['9a1c…', '3f2b…'] })
 * // "No tasks with ids '9a1c…', '3f2b…' exist in this project."
 */
export function notFound(entityType: string, query: Record<string, string | readonly string[]>, hint?: string): Failure {
  const ids = Object.values(query).flat();
  const named =
    ids
      .slice(0, MAX_NAMED_IDS)
      .map((id) => `'${id}'`)
      .join(', ') + (ids.length > MAX_NAMED_IDS ? ` and ${ids.length - MAX_NAMED_IDS} more` : '');
  const message =
    ids.length === 1
      ? `No ${entityType} with id ${named} exists in this project.`
      : `No ${entityType}s with ids ${named} exist in this project.`;
  return fail('NOT_FOUND', message, { hint, details: { entity_type: entityType, query: { ...query } } });
}

/**
 * Carries a failure out of code that cannot return one (a getter, a deep helper); the pipeline
 * answers with `failure` as if it had been returned.
 */
export class FailureError extends Error {
  readonly failure: Failure;

  constructor(failure: Failure) {
    super(failure.error.message);
    this.name = 'FailureError';
    this.failure = failure;
  }
}

/** The HTTP status a failure is answered with. */
export function statusOf(failure: Failure): number {
  return failure.status ?? ERROR_STATUS[failure.error.code];
}

/**
 * The meta of an answer that executed nothing: a catalog, or a refusal before any tool was chosen
 * (an unknown tool, a refused Origin). `tool` names what answered.
 */
export function metaWithoutExecution(tool: string, traceId: string = crypto.randomUUID()): Meta {
  return { tool, trace_id: traceId, duration_ms: 0, attempts: 0, queued_ms: 0, performance_warning: false };
}

/** A 429 or 503 that names no wait of its own tells the caller to wait this long. */
export const DEFAULT_RETRY_AFTER_MS = 2_000;

/**
 * How long the caller should wait before repeating a failed call: the failure's
 * `details.retry_after_ms` when it names one (any status, e.g. a 409 for a call still running), or
 * {@link DEFAULT_RETRY_AFTER_MS} for a 429 or 503 that names none. Undefined otherwise.
 */
export function retryAfterMs(failure: Failure): number | undefined {
  const named = failure.error.details?.retry_after_ms;
  if (typeof named === 'number' && Number.isFinite(named) && named >= 0) return named;
  const status = statusOf(failure);
  return status === 429 || status === 503 ? DEFAULT_RETRY_AFTER_MS : undefined;
}

/** The warnings an answer says in `meta.warnings`: the pipeline's own (in `meta`), then the tool's on success. */
export function answerWarnings(outcome: Outcome<unknown>, meta: Meta): Warning[] {
  return [...(meta.warnings ?? []), ...(outcome.ok ? (outcome.warnings ?? []) : [])];
}

/**
 * Wraps an outcome into the envelope sent to the caller. A 429 or 503 always carries
 * `details.retry_after_ms` (see {@link retryAfterMs}), on HTTP and MCP alike.
 */
export function envelope<T>(outcome: Outcome<T>, meta: Meta): ToolResult<T> {
  if (!outcome.ok) {
    const waitMs = retryAfterMs(outcome);
    const error =
      waitMs === undefined || outcome.error.details?.retry_after_ms === waitMs
        ? outcome.error
        : { ...outcome.error, details: { ...outcome.error.details, retry_after_ms: waitMs } };
    return { success: false, message: error.message, error, meta };
  }
  const fullMeta: Meta = { ...meta };
  if (outcome.truncated !== undefined) fullMeta.truncated = outcome.truncated;
  if (outcome.warnings?.length) fullMeta.warnings = answerWarnings(outcome, meta);
  const result: ToolResult<T> = { success: true, message: outcome.message, data: outcome.data, meta: fullMeta };
  if (outcome.links?.length) result.links = outcome.links;
  return result;
}
