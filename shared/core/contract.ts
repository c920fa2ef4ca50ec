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
    [key: string]: unknown;
  };
}

export interface Pagination {
  current_chunk: number;
  total_chunks: number;
  chunk_size: number;
  overlap: number;
}

export interface Meta {
  tool: string;
  trace_id: string;
  duration_ms: number;
  attempts: number;
  queued_ms: number;
  performance_warning: boolean;
  pagination?: Pagination;
  truncated?: boolean;
  /** True when the answer is the stored answer of an earlier call with the same idempotency key. */
  replayed?: boolean;
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
  pagination?: Pagination;
  truncated?: boolean;
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
export function ok<T>(
  data: T,
  message: string,
  extras: Pick<Success<T>, 'links' | 'pagination' | 'truncated'> = {},
): Success<T> {
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

/** Wraps an outcome into the envelope sent to the caller. */
export function envelope<T>(outcome: Outcome<T>, meta: Meta): ToolResult<T> {
  if (!outcome.ok) {
    return { success: false, message: outcome.error.message, error: outcome.error, meta };
  }
  const fullMeta: Meta =
    outcome.pagination || outcome.truncated !== undefined
      ? { ...meta, pagination: outcome.pagination, truncated: outcome.truncated }
      : meta;
  const result: ToolResult<T> = { success: true, message: outcome.message, data: outcome.data, meta: fullMeta };
  if (outcome.links) result.links = outcome.links;
  return result;
}
