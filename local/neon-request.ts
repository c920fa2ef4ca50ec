/**
 * A request to the Neon stand-in's SQL endpoint (local/neon-http.ts), read as Neon's proxy reads it:
 * the `Neon-Batch-*` headers before the body, the body's size limit, one statement or a batch, and
 * JSON parameters converted to Postgres text (docs/neon-http-protocol.md).
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

/** Neon's default request size limit. */
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/** The isolation levels `Neon-Batch-Isolation-Level` accepts, as Postgres spells them. */
export const ISOLATION_LEVELS: Record<string, string> = {
  ReadUncommitted: 'READ UNCOMMITTED',
  ReadCommitted: 'READ COMMITTED',
  RepeatableRead: 'REPEATABLE READ',
  Serializable: 'SERIALIZABLE',
};

/** A parameter as Postgres receives it: text, or NULL. */
export type Param = string | null;
/** One statement and its parameters. */
export interface Statement {
  query: string;
  params: Param[];
}
/** A request's body: one statement, or a batch run in one transaction. */
export type Payload = { statement: Statement } | { statements: Statement[] };

/** How a batch's transaction begins (the `Neon-Batch-*` headers). */
export interface BatchOptions {
  isolationLevel?: string;
  readOnly: boolean;
  deferrable: boolean;
}

/** A client mistake answered before Postgres sees anything (bad body, bad header, too large). */
export class RequestError extends Error {
  status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** The batch's transaction modes from the `Neon-Batch-*` headers; an unknown isolation level is a 400. */
export function batchOptions(headers: IncomingHttpHeaders): BatchOptions {
  const level = headers['neon-batch-isolation-level'];
  if (level !== undefined && (typeof level !== 'string' || !Object.hasOwn(ISOLATION_LEVELS, level))) {
    throw new RequestError(400, 'invalid isolation level');
  }
  // Neon treats anything but exactly "true" as false.
  return {
    isolationLevel: level,
    readOnly: headers['neon-batch-read-only'] === 'true',
    deferrable: headers['neon-batch-deferrable'] === 'true',
  };
}

/** The `Neon-Batch-*` headers Neon echoes on a batch's answer. */
export function batchHeaders(batch: BatchOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  if (batch.readOnly) headers['Neon-Batch-Read-Only'] = 'true';
  if (batch.deferrable) headers['Neon-Batch-Deferrable'] = 'true';
  if (batch.isolationLevel !== undefined) headers['Neon-Batch-Isolation-Level'] = batch.isolationLevel;
  return headers;
}

/** The request's body as text; past MAX_REQUEST_BYTES a 413, after the body is drained. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    // Drain an oversized body instead of destroying the socket, so the client still gets the 413.
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size <= MAX_REQUEST_BYTES) chunks.push(chunk);
    }
  } catch (error) {
    throw new RequestError(400, `could not read the HTTP request body: ${(error as Error).message}`);
  }
  if (size > MAX_REQUEST_BYTES) {
    throw new RequestError(413, `request is too large (max is ${MAX_REQUEST_BYTES} bytes)`);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Accepts what Neon's proxy accepts: `{query, params?}` or `{queries: [{query, params?}, …]}`. */
export function parsePayload(text: string): Payload {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RequestError(400, `could not parse the HTTP request body: ${(error as Error).message}`);
  }
  const statement = toStatement(value);
  if (statement !== undefined) return { statement };
  if (isRecord(value) && Array.isArray(value.queries)) {
    const statements = value.queries.map(toStatement);
    if (statements.every((s) => s !== undefined)) return { statements };
  }
  throw new RequestError(400, 'could not parse the HTTP request body: expected {"query","params"} or {"queries":[…]}');
}

function toStatement(value: unknown): Statement | undefined {
  if (!isRecord(value) || typeof value.query !== 'string') return undefined;
  const params = value.params === undefined ? [] : value.params;
  if (!Array.isArray(params)) return undefined;
  return { query: value.query, params: params.map(toParam) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Neon's conversion of JSON params to Postgres text: non-strings become JSON, arrays array literals. */
function toParam(value: unknown): Param {
  if (value === null || typeof value === 'string') return value;
  if (Array.isArray(value)) return arrayLiteral(value);
  return JSON.stringify(value);
}

function arrayLiteral(items: unknown[]): string {
  return `{${items.map(arrayItem).join(',')}}`;
}

function arrayItem(value: unknown): string {
  if (value === null) return 'NULL';
  if (Array.isArray(value)) return arrayLiteral(value);
  // Items are quoted with JSON string escaping; objects become quoted JSON text.
  return JSON.stringify(typeof value === 'object' ? JSON.stringify(value) : value);
}
