/**
 * Reading the trace back: a project's executions, newest first, filtered and paginated
 * (`GET /executions`), and one execution whole (`GET /executions/:trace_id`). Every query is
 * scoped to the caller's project: another project's trace id is simply not found.
 */
import { and, desc, eq, gte, inArray, lt, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import * as z from 'zod';
import { apiKeys, toolExecutions, toolRefusals } from '../../drizzle/schema.ts';
import { ERROR_STATUS, fail, ok, type ErrorCode, type Outcome, type Warning } from '../core/contract.ts';
import { plural } from '../core/plural.ts';
import { cursorField, decodeCursor, encodeCursor, nextCursorField } from '../core/cursor.ts';
import { dateTime } from '../core/fields.ts';
import { warningSchema } from '../core/warning-schema.ts';
import type { Database } from '../core/database.ts';

const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

/** Stored values longer than this (as JSON text) are left out of listings; the execution itself has them whole. */
const LISTING_VALUE_LIMIT = 8_000;

/** The query of `GET /executions`. */
export const executionsQuery = z.strictObject({
  tool: z.string().min(1).max(100).optional().describe('Only executions of this tool (its id).'),
  status: z.enum(['success', 'failure']).optional().describe('Only successes, or only failures.'),
  error_code: z.enum(ERROR_CODES).optional().describe('Only failures with this error code.'),
  since: dateTime()
    .optional()
    .describe('Only executions that started at or after this instant (RFC 3339 with a time zone, as tool inputs take them).'),
  until: dateTime()
    .optional()
    .describe('Only executions that started before this instant (RFC 3339 with a time zone, as tool inputs take them).'),
  min_duration_ms: z.number().min(0).max(86_400_000).optional().describe('Only executions that took at least this long.'),
  otel_trace_id: z
    .string()
    .regex(/^[0-9a-fA-F]{32}$/, 'must be a W3C trace id: 32 hex digits')
    .optional()
    .describe('Only executions in this distributed trace (the trace id of a traceparent the caller sent, or of the execution itself).'),
  execution: z.uuid().optional().describe("Only the tool calls made by this code-mode execution's code (its trace id)."),
  limit: z.int().min(1).max(100).default(20).describe('Executions per page (default 20).'),
  cursor: cursorField.optional(),
  response_format: z
    .enum(['concise', 'detailed'])
    .default('concise')
    .describe('concise: tool, status, code, duration, queue wait, attempts, time. detailed: also input, and output or error.'),
});

/** The query parameters of `GET /executions` that are numbers. */
export const EXECUTIONS_NUMERIC_PARAMETERS = ['min_duration_ms', 'limit'] as const;

/** Where a page of executions ends: the last (created_at, id) answered. */
const executionsCursor = z.strictObject({ before: z.tuple([dateTime(), z.uuid()]) });

const summaryShape = {
  trace_id: z.string().describe("The execution's id: meta.trace_id of its answer."),
  tool: z.string(),
  status: z.enum(['success', 'failure']),
  error_code: z.enum(ERROR_CODES).nullable(),
  duration_ms: z.number(),
  queued_ms: z.number().describe('Time spent waiting for an execution slot.'),
  attempts: z.int(),
  performance_warning: z.boolean(),
  started_at: z.string().describe('When the call arrived (ISO 8601, UTC, microseconds).'),
  execution_id: z
    .string()
    .nullable()
    .describe("For a tool call made by code-mode code: the trace id of that code's execution; null otherwise."),
};

/** One execution in a listing. */
export const executionSummary = z.object({
  ...summaryShape,
  input: z.unknown().optional().describe(`detailed: the validated input (absent when longer than ${LISTING_VALUE_LIMIT} characters).`),
  output: z.unknown().optional().describe('detailed: the data answered, on success.'),
  error: z.unknown().optional().describe('detailed: the error, stack included, on failure.'),
  omitted: z
    .array(z.enum(['input', 'output', 'error']))
    .optional()
    .describe('detailed: values left out for their size; GET /executions/{trace_id} has them.'),
});

/** A page of `GET /executions`. */
export const executionsPage = z.object({
  executions: z.array(executionSummary),
  next_cursor: nextCursorField,
});

/** One execution whole (`GET /executions/:trace_id`). */
export const executionDetail = z.object({
  ...summaryShape,
  input: z.unknown().describe('The validated input.'),
  output: z.unknown().describe('The data answered, on success; null on failure.'),
  error: z.unknown().describe('On failure: the error as answered, with `cause` (stack included); null on success.'),
  retry_errors: z
    .array(z.object({ attempt: z.int(), code: z.string(), message: z.string(), time_ms: z.number(), cause: z.unknown() }))
    .describe('Each failed attempt that was tried again, in order.'),
  warnings: z
    .array(warningSchema)
    .describe("What the answer's meta.warnings said (lease_lost, rounded), in order; empty when it said none."),
  actor: z
    .object({ api_key_id: z.string().nullable(), api_key_name: z.string().nullable() })
    .describe('The API key that made the call (never the key itself).'),
  otel: z
    .object({ trace_id: z.string().nullable(), span_id: z.string().nullable(), parent_span_id: z.string().nullable() })
    .describe("W3C trace context: the trace (the caller's traceparent, or the execution's own), its span, and the caller's span."),
});

export type ExecutionsQuery = z.output<typeof executionsQuery>;
export type ExecutionsPage = z.output<typeof executionsPage>;
export type ExecutionSummary = z.output<typeof executionSummary>;
export type ExecutionDetail = z.output<typeof executionDetail>;

const EXAMPLE = 'Example of a valid call: GET /executions?status=failure&limit=20';

/** When a call arrived, as the API shows it and cursors hold it: ISO 8601 in UTC with microseconds. */
const startedAt = sql<string>`to_char(${toolExecutions.createdAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

const summaryColumns = {
  trace_id: toolExecutions.id,
  tool: toolExecutions.tool,
  status: toolExecutions.status,
  error_code: toolExecutions.errorCode,
  duration_ms: toolExecutions.durationMs,
  queued_ms: toolExecutions.queuedMs,
  attempts: toolExecutions.attempts,
  performance_warning: toolExecutions.performanceWarning,
  started_at: startedAt,
  execution_id: toolExecutions.parentExecutionId,
};

/** A stored value, or null when its JSON text is over the listing limit (measured in SQL, so it never leaves the database). */
function listed(column: AnyPgColumn) {
  return sql<unknown>`case when length(${column}::text) <= ${LISTING_VALUE_LIMIT} then ${column} end`;
}
function oversized(column: AnyPgColumn) {
  return sql<boolean>`coalesce(length(${column}::text) > ${LISTING_VALUE_LIMIT}, false)`;
}

/** A page of the project's executions, newest first; only those of `tools` when given (a credential limited to some toolsets). */
export async function listExecutions(
  db: Database,
  projectId: string,
  query: ExecutionsQuery,
  tools?: readonly string[],
): Promise<Outcome<ExecutionsPage>> {
  const conditions: SQL[] = [eq(toolExecutions.projectId, projectId)];
  if (tools) conditions.push(inArray(toolExecutions.tool, [...tools]));
  if (query.tool) conditions.push(eq(toolExecutions.tool, query.tool));
  if (query.status) conditions.push(eq(toolExecutions.status, query.status === 'success' ? 'success' : 'error'));
  // Only failures have a code: saying so lets Postgres read the failures' own index.
  if (query.error_code) conditions.push(eq(toolExecutions.status, 'error'), eq(toolExecutions.errorCode, query.error_code));
  if (query.since) conditions.push(gte(toolExecutions.createdAt, new Date(query.since)));
  if (query.until) conditions.push(lt(toolExecutions.createdAt, new Date(query.until)));
  if (query.min_duration_ms !== undefined) conditions.push(gte(toolExecutions.durationMs, query.min_duration_ms));
  if (query.execution) conditions.push(eq(toolExecutions.parentExecutionId, query.execution));
  if (query.otel_trace_id) conditions.push(eq(toolExecutions.otelTraceId, query.otel_trace_id.toLowerCase()));
  if (query.cursor) {
    const position = decodeCursor(executionsCursor, query.cursor, { hint: EXAMPLE });
    if (!position.ok) return position;
    const [time, id] = position.value.before;
    conditions.push(sql`(${toolExecutions.createdAt}, ${toolExecutions.id}) < (${time}::timestamptz, ${id}::uuid)`);
  }

  const detailed = query.response_format === 'detailed';
  const rows = await db
    .select({
      ...summaryColumns,
      ...(detailed && {
        input: listed(toolExecutions.input),
        output: listed(toolExecutions.output),
        error: listed(toolExecutions.error),
        input_omitted: oversized(toolExecutions.input),
        output_omitted: oversized(toolExecutions.output),
        error_omitted: oversized(toolExecutions.error),
      }),
    })
    .from(toolExecutions)
    .where(and(...conditions))
    .orderBy(desc(toolExecutions.createdAt), desc(toolExecutions.id))
    .limit(query.limit + 1);

  const more = rows.length > query.limit;
  const page = rows.slice(0, query.limit);
  const executions = page.map((row): ExecutionSummary => {
    const summary = summaryOf(row);
    if (!detailed) return summary;
    const values = row as typeof row & Record<`${'input' | 'output' | 'error'}${'' | '_omitted'}`, unknown>;
    const omitted = (['input', 'output', 'error'] as const).filter((field) => values[`${field}_omitted`] === true);
    return { ...summary, input: values.input, output: values.output, error: values.error, ...(omitted.length > 0 && { omitted }) };
  });
  const last = page.at(-1);
  const nextCursor = more && last ? encodeCursor({ before: [last.started_at, last.trace_id] }) : null;
  const count = plural(executions.length, 'execution');
  const message =
    executions.length === 0
      ? 'No executions match; widen the filters (or the time range) to see more.'
      : more
        ? `${count}, newest first; more match: pass next_cursor as cursor for the next page.`
        : `${count}, newest first.`;
  return ok({ executions, next_cursor: nextCursor }, message, more ? { truncated: true } : {});
}

/**
 * One execution whole, or NOT_FOUND (a refused call gets told it was refused, not executed). With
 * `tools`, another tool's execution is not found, as another project's is.
 */
export async function getExecution(
  db: Database,
  projectId: string,
  traceId: string,
  tools?: readonly string[],
): Promise<Outcome<ExecutionDetail>> {
  const [[row], [refusal]] = await db.batch([
    db
      .select({
        ...summaryColumns,
        input: toolExecutions.input,
        output: toolExecutions.output,
        error: toolExecutions.error,
        retry_errors: toolExecutions.retryErrors,
        warnings: toolExecutions.warnings,
        api_key_id: toolExecutions.apiKeyId,
        api_key_name: apiKeys.name,
        otel_trace_id: toolExecutions.otelTraceId,
        otel_span_id: toolExecutions.otelSpanId,
        otel_parent_span_id: toolExecutions.otelParentSpanId,
      })
      .from(toolExecutions)
      .leftJoin(apiKeys, eq(apiKeys.id, toolExecutions.apiKeyId))
      .where(
        and(eq(toolExecutions.projectId, projectId), eq(toolExecutions.id, traceId), tools && inArray(toolExecutions.tool, [...tools])),
      ),
    db
      .select({ code: toolRefusals.code, tool: toolRefusals.tool })
      .from(toolRefusals)
      .where(and(eq(toolRefusals.projectId, projectId), eq(toolRefusals.id, traceId), tools && inArray(toolRefusals.tool, [...tools]))),
  ]);
  if (row) {
    const retryErrors = (row.retry_errors ?? []) as { attempt: number; code: string; message: string; timeMs: number; cause: unknown }[];
    return ok(
      {
        ...summaryOf(row),
        input: row.input,
        output: row.output,
        error: row.error,
        retry_errors: retryErrors.map(({ attempt, code, message, timeMs, cause }) => ({ attempt, code, message, time_ms: timeMs, cause })),
        warnings: (row.warnings ?? []) as Warning[],
        actor: { api_key_id: row.api_key_id, api_key_name: row.api_key_name },
        otel: { trace_id: row.otel_trace_id, span_id: row.otel_span_id, parent_span_id: row.otel_parent_span_id },
      },
      `Execution ${traceId} of ${row.tool}: ${row.status === 'success' ? 'succeeded' : `failed with ${row.error_code}`} in ${row.duration_ms} ms after ${plural(row.attempts, 'attempt')}.`,
    );
  }
  const details = { entity_type: 'execution', query: { trace_id: traceId } };
  if (refusal) {
    return fail(
      'NOT_FOUND',
      `The call with trace id ${traceId} (${refusal.tool}) was refused with ${refusal.code} before executing, so it has no execution trace; GET /metrics counts it.`,
      {
        hint: 'Refused calls are answered with the reason at once; repeat the call with what that answer asked for.',
        details: { ...details, refused_with: refusal.code },
      },
    );
  }
  return fail(
    'NOT_FOUND',
    `This project has no execution with trace id ${traceId}. Executions are kept for a limited time (TRACE_RETENTION_DAYS), and other projects' executions (and, for a credential limited to some toolsets, other toolsets') are not visible.`,
    {
      hint: 'List recent executions with GET /executions (newest first), or pass the meta.trace_id of an answer.',
      details,
    },
  );
}

/**
 * A trace id as a UUID: the `meta.trace_id` of an answer, in any case, or the same 32 hex digits
 * without dashes (the W3C trace id of an execution that started its own trace).
 */
export function normalizeTraceId(value: string): string | undefined {
  if (!/^(?:[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i.test(value)) return undefined;
  const hex = value.replace(/-/g, '').toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function summaryOf(row: { [K in keyof typeof summaryColumns]: unknown }): ExecutionSummary {
  return {
    trace_id: row.trace_id as string,
    tool: row.tool as string,
    status: row.status === 'success' ? 'success' : 'failure',
    error_code: row.error_code as ErrorCode | null,
    duration_ms: row.duration_ms as number,
    queued_ms: row.queued_ms as number,
    attempts: row.attempts as number,
    performance_warning: row.performance_warning as boolean,
    started_at: row.started_at as string,
    execution_id: (row.execution_id as string | null) ?? null,
  };
}
