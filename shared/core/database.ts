/**
 * What a database is to the code above it, and what its failures mean, without I/O: the client's
 * type (drizzle over Neon's SQL-over-HTTP driver), the array parameters, and the one place where
 * database errors become contract failures. The client itself is built in shared/runtime/db.ts.
 */
import { NeonDbError } from '@neondatabase/serverless';
import { DrizzleQueryError, sql, type SQL } from 'drizzle-orm';
import type { NeonHttpDatabase } from 'drizzle-orm/neon-http';
import { fail, type Failure, type ToolError } from './contract.ts';

/** The database client every tool and record helper is given (drizzle over Neon's HTTP driver). */
export type Database = NeonHttpDatabase;

/**
 * A list of uuids as one `uuid[]` parameter, for `= any(...)`. (Interpolated as is, drizzle would
 * spread an array into one parameter per element.)
 */
export function uuidArray(ids: readonly string[]): SQL {
  return sql`${sql.param(ids)}::uuid[]`;
}

/** A list of integers as one `int[]` parameter, for `= any(...)` (see {@link uuidArray}). */
export function integerArray(ids: readonly number[]): SQL {
  return sql`${sql.param(ids)}::int[]`;
}

/** The Postgres error behind a drizzle or Neon error, if any. */
export interface PostgresErrorFields {
  message: string;
  code?: string;
  detail?: string;
  constraint?: string;
  table?: string;
  column?: string;
}

/** Unwraps drizzle's `DrizzleQueryError` (single queries) to the driver's `NeonDbError` (batches arrive bare). */
export function postgresErrorOf(error: unknown): PostgresErrorFields | undefined {
  const inner = error instanceof DrizzleQueryError && error.cause ? error.cause : error;
  return inner instanceof NeonDbError ? inner : undefined;
}

/** SQLSTATEs after which the same statement may succeed if simply tried again. */
const TRANSIENT_SQLSTATE = /^(08...|40001|40P01|53...|57P0[123])$/;

/**
 * Neon's SQL-over-HTTP endpoint answers 507 when a response would exceed its limit (10 MB by
 * default): the same query fails the same way every time, so it is never retried.
 */
const RESPONSE_TOO_LARGE_STATUS = '507';

/**
 * Whether a database error is worth retrying: connection failures, serialization failures,
 * deadlocks, resource exhaustion, server shutdown, and HTTP 5xx answers from the SQL endpoint
 * other than a response over its size limit.
 */
export function isTransientDatabaseError(pg: PostgresErrorFields): boolean {
  if (pg.code) return TRANSIENT_SQLSTATE.test(pg.code);
  const status = httpStatusOf(pg);
  // No SQLSTATE: either the endpoint answered an HTTP error, or it could not be reached at all.
  return status === undefined || (Number(status) >= 500 && status !== RESPONSE_TOO_LARGE_STATUS);
}

/** The HTTP status of an error the SQL endpoint answered without a SQLSTATE (the driver's "Server error (HTTP status N)"). */
function httpStatusOf(pg: PostgresErrorFields): string | undefined {
  return /HTTP status (\d{3})/.exec(pg.message)?.[1];
}

/**
 * Turns a database error into a contract failure, or returns undefined for other errors.
 * Messages name the constraint or the missing object, never SQL or parameters.
 */
export function databaseFailure(error: unknown): Failure | undefined {
  const pg = postgresErrorOf(error);
  if (!pg) return undefined;
  const details = { sqlstate: pg.code, constraint: pg.constraint };

  if (pg.code === '23505') {
    const columns = uniqueViolationColumns(pg.detail);
    return fail(
      'CONFLICT',
      `A record with the same ${columns.join(', ') || 'unique values'} already exists${pg.constraint ? ` (constraint ${pg.constraint})` : ''}. Change ${columns.length > 1 ? 'one of these values' : 'this value'} or update the existing record instead.`,
      { details: { ...details, columns }, cause: error },
    );
  }
  if (pg.code === '42P01') {
    return fail('CONFIG_ERROR', 'A table this tool needs does not exist in the database; the deployment is misconfigured.', {
      hint: 'Apply the migrations (npm run db:migrate) or fix the table configuration.',
      details: { ...details, reason: 'table_not_found' },
      cause: error,
    });
  }
  if (pg.code === '42703') {
    return fail('CONFIG_ERROR', 'A column this tool needs does not exist in the database; the deployment is misconfigured.', {
      hint: 'Apply the migrations (npm run db:migrate) or fix the column mappings.',
      details: { ...details, reason: 'column_not_found' },
      cause: error,
    });
  }
  if (pg.code === '42P10') {
    return fail(
      'CONFIG_ERROR',
      'A unique constraint this tool relies on (to recognise rows it already wrote) is missing from the database; the deployment is misconfigured.',
      {
        hint: "Apply the migrations (npm run db:migrate), or give the table's id column a primary key.",
        details: { ...details, reason: 'unique_constraint_missing' },
        cause: error,
      },
    );
  }
  if (!pg.code && httpStatusOf(pg) === RESPONSE_TOO_LARGE_STATUS) {
    return databaseError(
      "The database's answer to this call would exceed the size limit of its HTTP endpoint (10 MB), so nothing was returned.",
      {
        kind: 'tooLarge',
        details: { ...details, reason: 'response_too_large' },
        cause: error,
      },
    );
  }
  if (isTransientDatabaseError(pg))
    return databaseError('The database is temporarily unavailable.', { kind: 'transient', details, cause: error });
  if (pg.code?.startsWith('23')) {
    const violated = pg.constraint ? `constraint ${pg.constraint}` : 'a constraint';
    return databaseError(`The database rejected the data: it violates ${violated}.`, { kind: 'rejected', details, cause: error });
  }
  return databaseError('The database could not complete the operation.', { kind: 'permanent', details, cause: error });
}

/**
 * What a DATABASE_ERROR tells the agent to do next, by kind of failure, after the agent policy
 * "apologise briefly and suggest a retry": the sentence ending the message, and the hint.
 */
const NEXT_STEP = {
  /** Worth retrying as is: 503, `retryable: true`. */
  transient: {
    suggest: 'suggest trying again in a few seconds: the same call may then succeed',
    hint: 'Repeat the same call in a few seconds, with the same Idempotency-Key if it had one, so that a write is never applied twice.',
  },
  /** The data broke a rule of the database (a constraint): the same values fail again. */
  rejected: {
    suggest: 'suggest trying again with corrected values: the same call unchanged would fail the same way',
    hint: "Check the values against the tool's input description, ask the user to correct the wrong one, then call again.",
  },
  /** The answer would exceed the SQL endpoint's size limit: the same call fails the same way every time. */
  tooLarge: {
    suggest: 'ask for less in one call (fewer ids, or a smaller page): the same call fails the same way every time',
    hint: 'Split the work: fewer ids per call, or follow next_cursor page by page.',
  },
  /** Anything else: repeating at once fails the same way. */
  permanent: {
    suggest: 'suggest trying again later: the same call repeated right away would fail the same way',
    hint: 'Do not repeat the call unchanged right away; tell the user, and try again later.',
  },
} as const;

export interface DatabaseErrorOptions {
  kind: keyof typeof NEXT_STEP;
  details?: ToolError['details'];
  cause?: unknown;
}

/**
 * The DATABASE_ERROR every tool answers: what went wrong (`what`), then what the agent does about
 * it, by `kind` ({@link NEXT_STEP}). Only a transient failure is retryable (503). Never SQL or
 * parameters: those stay in `cause`, for the trace.
 *
 * @example
 * databaseError('The database is temporarily unavailable.', { kind: 'transient', cause: error })
 * // "The database is temporarily unavailable. Apologise briefly to the user and suggest trying again in a few seconds: …"
 */
export function databaseError(what: string, { kind, details, cause }: DatabaseErrorOptions): Failure {
  const transient = kind === 'transient';
  return fail('DATABASE_ERROR', `${what} Apologise briefly to the user and ${NEXT_STEP[kind].suggest}.`, {
    hint: NEXT_STEP[kind].hint,
    retryable: transient,
    ...(transient ? { status: 503 } : {}),
    details,
    cause,
  });
}

/** Column names from a unique violation's detail: `Key (user_id, "timestamp")=(...) already exists.` */
function uniqueViolationColumns(detail: string | undefined): string[] {
  const list = detail ? /^Key \((.+?)\)=/.exec(detail)?.[1] : undefined;
  return list ? list.split(',').map((column) => column.trim().replace(/^"|"$/g, '')) : [];
}
