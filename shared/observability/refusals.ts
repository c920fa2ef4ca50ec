/**
 * Refusals: calls of a known project refused before executing (invalid input, body too large,
 * rate limit, no slot). They are not executions, so they leave no trace row, but GET /metrics
 * counts them: one `tool_refusals` row each, written after the response, in one batch with the
 * cumulative counter of refused calls (./counters.ts). The row keeps why (the message, and for
 * invalid input each field's problem), which `GET /refusals` lists.
 */
import { and, desc, eq, gte, inArray, sql, type SQL } from 'drizzle-orm';
import * as z from 'zod';
import { toolRefusals } from '../../drizzle/schema.ts';
import { ERROR_STATUS, ok, type ErrorCode, type Failure, type Outcome } from '../core/contract.ts';
import { dateTime } from '../core/fields.ts';
import { plural } from '../core/plural.ts';
import type { Database } from '../core/database.ts';
import { addCounts, refusalCount } from './counters.ts';
import { log } from '../core/log.ts';

export interface RefusalRecord {
  /** The trace id answered in `meta.trace_id`. */
  traceId: string;
  projectId: string;
  apiKeyId: string;
  tool: string;
  /** The refusal as answered. */
  failure: Failure;
  /** When the call arrived. */
  startedAt: Date;
  /** For a call made by code mode's code: the trace id of that code's execution. */
  parentExecutionId?: string;
}

/** Counts one refusal and keeps its reason. Never rejects: a failed write is logged instead. */
export async function recordRefusal(db: Database, record: RefusalRecord): Promise<void> {
  const { code, message, details } = record.failure.error;
  const fields = details?.fields?.map(({ field, code: problem, message: text }) => ({ field, code: problem, message: text }));
  try {
    const refusal = db.insert(toolRefusals).values({
      id: record.traceId,
      projectId: record.projectId,
      apiKeyId: record.apiKeyId,
      tool: record.tool,
      code,
      reason: sql`${JSON.stringify({ message, ...(fields && { fields }) })}::json`,
      createdAt: record.startedAt,
      parentExecutionId: record.parentExecutionId ?? null,
    });
    await db.batch([refusal, addCounts(db, refusalCount(record.projectId, record.tool, code))]);
  } catch (error) {
    log('error', 'refusal_write_failed', {
      trace_id: record.traceId,
      tool: record.tool,
      error: error instanceof Error ? error.message : String(error),
    });
  }
}

const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

/** The query of `GET /refusals`. */
export const refusalsQuery = z.strictObject({
  tool: z.string().min(1).max(100).optional().describe('Only refusals of this tool (its id).'),
  code: z.enum(ERROR_CODES).optional().describe('Only refusals with this code (VALIDATION_ERROR, RATE_LIMITED, BUSY, ...).'),
  since: dateTime().optional().describe('Only calls that arrived at or after this instant (RFC 3339 with a time zone).'),
  limit: z.int().min(1).max(100).default(20).describe('Refusals to list, newest first (default 20).'),
});

/** The query parameters of `GET /refusals` that are numbers. */
export const REFUSALS_NUMERIC_PARAMETERS = ['limit'] as const;

/** One refused call. */
export const refusalSummary = z.object({
  trace_id: z.string().describe('meta.trace_id of the refusal answered.'),
  tool: z.string(),
  code: z.enum(ERROR_CODES),
  message: z.string().nullable().describe('The message answered (null for refusals recorded before messages were kept).'),
  fields: z
    .array(z.object({ field: z.string(), code: z.string(), message: z.string() }))
    .describe('For invalid input: each field and its problem.'),
  started_at: z.string().describe('When the call arrived (ISO 8601, UTC, microseconds).'),
});

/** The data of `GET /refusals`. */
export const refusalsPage = z.object({ refusals: z.array(refusalSummary) });

export type RefusalsQuery = z.output<typeof refusalsQuery>;
export type RefusalsPage = z.output<typeof refusalsPage>;

/** The project's most recent refusals, newest first; only those of `tools` when given (a credential limited to some toolsets). */
export async function listRefusals(
  db: Database,
  projectId: string,
  query: RefusalsQuery,
  tools?: readonly string[],
): Promise<Outcome<RefusalsPage>> {
  const conditions: SQL[] = [eq(toolRefusals.projectId, projectId)];
  if (tools) conditions.push(inArray(toolRefusals.tool, [...tools]));
  if (query.tool) conditions.push(eq(toolRefusals.tool, query.tool));
  if (query.code) conditions.push(eq(toolRefusals.code, query.code));
  if (query.since) conditions.push(gte(toolRefusals.createdAt, new Date(query.since)));
  const rows = await db
    .select({
      trace_id: toolRefusals.id,
      tool: toolRefusals.tool,
      code: toolRefusals.code,
      reason: toolRefusals.reason,
      started_at: sql<string>`to_char(${toolRefusals.createdAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
    })
    .from(toolRefusals)
    .where(and(...conditions))
    .orderBy(desc(toolRefusals.createdAt), desc(toolRefusals.id))
    .limit(query.limit);
  const refusals = rows.map(({ reason, ...row }) => {
    const kept = (reason ?? {}) as { message?: string; fields?: { field: string; code: string; message: string }[] };
    return { ...row, code: row.code as ErrorCode, message: kept.message ?? null, fields: kept.fields ?? [] };
  });
  return ok({ refusals }, refusals.length === 0 ? 'No refused calls match.' : `${plural(refusals.length, 'refused call')}, newest first.`);
}
