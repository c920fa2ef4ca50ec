/**
 * Refusals: calls of a known project refused before executing (invalid input, body too large,
 * rate limit, no slot). They are not executions, so they leave no trace row, but GET /metrics
 * counts them: one `tool_refusals` row each, written after the response, in one batch with the
 * cumulative counter of refused calls (./counters.ts).
 */
import { toolRefusals } from '../../drizzle/schema.ts';
import type { ErrorCode } from '../core/contract.ts';
import type { Database } from '../runtime/db.ts';
import { addCounts, refusalCount } from './counters.ts';
import { log } from './log.ts';

export interface RefusalRecord {
  /** The trace id answered in `meta.trace_id`. */
  traceId: string;
  projectId: string;
  apiKeyId: string;
  tool: string;
  code: ErrorCode;
  /** When the call arrived. */
  startedAt: Date;
}

/** Counts one refusal. Never rejects: a failed write is logged instead. */
export async function recordRefusal(db: Database, record: RefusalRecord): Promise<void> {
  try {
    const refusal = db.insert(toolRefusals).values({
      id: record.traceId,
      projectId: record.projectId,
      apiKeyId: record.apiKeyId,
      tool: record.tool,
      code: record.code,
      createdAt: record.startedAt,
    });
    await db.batch([refusal, addCounts(db, refusalCount(record.projectId, record.tool, record.code))]);
  } catch (error) {
    log('error', 'refusal_write_failed', { trace_id: record.traceId, tool: record.tool, error: error instanceof Error ? error.message : String(error) });
  }
}
