// A local stand-in for Neon's SQL-over-HTTP endpoint, backed by PGlite with pgvector.
// It speaks the protocol described in docs/neon-http-protocol.md: text params in, Postgres
// text output back, one Postgres extended-protocol round per statement, so values reach the client
// byte for byte as Neon would send them. A request is read as Neon's proxy reads it by
// local/neon-request.ts.
import { mkdir } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PGlite, messages as wire, protocol } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { keepIdleConnections } from './keep-alive.ts';
import {
  batchHeaders,
  batchOptions,
  ISOLATION_LEVELS,
  parsePayload,
  readBody,
  RequestError,
  type BatchOptions,
  type Param,
  type Payload,
  type Statement,
} from './neon-request.ts';
import { NO_ROUND_TRIP, RoundTripDelay, STATS_PATH, type RoundTrip, type ServedRequest } from './round-trip.ts';

/** A running stand-in; point `neonConfig.fetchEndpoint` at `url` and `neon()` at `connectionString`. */
export interface NeonStandIn {
  /** The SQL endpoint, e.g. `http://127.0.0.1:PORT/sql` (use it as `neonConfig.fetchEndpoint`). */
  url: string;
  /** `postgres://edge:edge@127.0.0.1:PORT/edge`; credentials and database name are not checked. */
  connectionString: string;
  /** The port actually bound (useful when 0 asked for a free one). */
  port: number;
  /** The injected round trip of its requests (changeable while it runs), and what it served. */
  roundTrip: RoundTripDelay;
  /** Stops the HTTP server (in-flight requests finish first), then closes PGlite. */
  close(): Promise<void>;
}

/** Where and how to run the stand-in. */
export interface NeonStandInOptions {
  /** File-backed PGlite data directory (created if missing); in-memory when absent. */
  dataDir?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Defaults to 127.0.0.1. */
  host?: string;
  /** The round trip every SQL request costs (local/round-trip.ts); default none. */
  roundTrip?: RoundTrip;
  /** Called with each SQL request once it is answered (when it arrived and was answered, and its statements). */
  onServed?: (request: ServedRequest) => void;
}

// Neon's default response size limit. It counts what Neon's proxy counts: the bytes of the rows
// Postgres sent (each DataRow's body), summed over a batch; past it, Neon answers HTTP 507
// "response is too large (max is 10485760 bytes)". The request limit is in local/neon-request.ts.
const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

const ERROR_FIELDS = [
  'severity',
  'code',
  'detail',
  'hint',
  'position',
  'internalPosition',
  'internalQuery',
  'where',
  'schema',
  'table',
  'column',
  'dataType',
  'constraint',
  'file',
  'line',
  'routine',
] as const;

interface Reply {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

/** What one protocol round produced: the result JSON, or the first Postgres error. */
interface Outcome {
  /** ReadyForQuery status: I idle, T in a transaction, E in a failed transaction. */
  txStatus: string;
  error?: wire.DatabaseError;
  json: string;
  /** Bytes of the rows as Postgres sent them: what Neon counts against its response limit. */
  rowBytes: number;
}

type Runner = (payload: Payload, batch: BatchOptions) => Promise<Reply>;

/** What answers one request: the database, the injected round trip, and who is told what was served. */
interface Service {
  run: Runner;
  roundTrip: RoundTripDelay;
  onServed?: (request: ServedRequest) => void;
}

/**
 * Starts PGlite (with `CREATE EXTENSION IF NOT EXISTS vector`) and an HTTP server answering
 * `POST …/sql` like Neon's endpoint for @neondatabase/serverless and drizzle-orm/neon-http,
 * plus `GET /health` and `GET /__stats` (what it served, local/round-trip.ts).
 */
export async function startNeonStandIn(options: NeonStandInOptions = {}): Promise<NeonStandIn> {
  const host = options.host ?? '127.0.0.1';
  const pg = await openDatabase(options.dataDir);
  const service: Service = {
    run: exclusiveRunner(pg),
    roundTrip: new RoundTripDelay(options.roundTrip ?? NO_ROUND_TRIP),
    onServed: options.onServed,
  };
  const server = keepIdleConnections(createServer((req, res) => void handle(service, req, res)));
  let port: number;
  try {
    port = await listen(server, options.port ?? 0, host);
  } catch (error) {
    await pg.close();
    throw error;
  }
  const origin = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${origin}/sql`,
    connectionString: `postgres://edge:edge@${origin}/edge`,
    port,
    roundTrip: service.roundTrip,
    close: () => (closing ??= shutDown(server, pg)),
  };
}

async function openDatabase(dataDir: string | undefined): Promise<PGlite> {
  // PGlite creates only the last path segment itself.
  if (dataDir !== undefined) await mkdir(dataDir, { recursive: true });
  const pg = await PGlite.create({ dataDir, extensions: { vector } });
  await pg.exec('CREATE EXTENSION IF NOT EXISTS vector');
  return pg;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

async function shutDown(server: Server, pg: PGlite): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    // Keep-alive sockets, and a request still waiting for a statement, would otherwise hold close() open.
    server.closeAllConnections();
  });
  await pg.close();
}

/**
 * Runs each request with the database to itself. A PGlite that threw (it aborts with ExitStatus)
 * hangs on every later call, so from then on requests fail fast with the original error.
 */
function exclusiveRunner(pg: PGlite): Runner {
  let failure: unknown;
  return (payload, batch) =>
    pg.runExclusive(async () => {
      if (failure !== undefined) throw failure;
      try {
        return 'statement' in payload ? await runSingle(pg, payload.statement) : await runBatch(pg, payload.statements, batch);
      } catch (error) {
        failure = error;
        throw error;
      }
    });
}

/** Answers one request; an SQL request's answer is held for its round trip, then reported to `onServed`. */
async function handle({ run, roundTrip, onServed }: Service, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://stand-in').pathname;
  const control = controlReply(path, req, roundTrip);
  if (control) return send(res, control);
  const arrival = roundTrip.arrive();
  const sent = { body: '' };
  let reply: Reply;
  try {
    reply = await route(run, req, path, sent);
  } catch (error) {
    reply = error instanceof RequestError ? { status: error.status, body: requestErrorBody(error.message) } : internalError(error);
  }
  const answeredAt = await roundTrip.release(arrival);
  send(res, reply);
  onServed?.({ arrivedAt: arrival.arrivedAt, answeredAt, path, body: sent.body });
}

function send(res: ServerResponse, reply: Reply): void {
  res.writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers });
  res.end(reply.body);
}

/** The answer to a request about the stand-in itself (`GET /health`, `GET /__stats`), which costs no round trip. */
function controlReply(path: string, req: IncomingMessage, roundTrip: RoundTripDelay): Reply | undefined {
  if (req.method !== 'GET') return undefined;
  if (path === '/health') return { status: 200, body: '{"status":"ok"}' };
  if (path === STATS_PATH) return { status: 200, body: JSON.stringify(roundTrip.stats()) };
  return undefined;
}

/** Runs an SQL request; `sent.body` gets its body once read. */
async function route(run: Runner, req: IncomingMessage, path: string, sent: { body: string }): Promise<Reply> {
  if (!path.endsWith('/sql')) return { status: 404, body: '{"message":"not found"}' };
  if (req.method !== 'POST') {
    return { status: 405, body: '{"message":"method not allowed"}', headers: { Allow: 'POST' } };
  }
  // Like Neon: headers are validated before the body is read.
  const batch = batchOptions(req.headers);
  sent.body = await readBody(req);
  const payload = parsePayload(sent.body);
  const reply = await run(payload, batch);
  return 'statements' in payload && reply.status === 200 ? { ...reply, headers: batchHeaders(batch) } : reply;
}

function internalError(error: unknown): Reply {
  console.error('neon stand-in:', error);
  const message = error instanceof Error ? error.message : String(error);
  return { status: 500, body: requestErrorBody(`local database failed: ${message}`) };
}

// ---- execution (always inside runExclusive) ----

async function runSingle(pg: PGlite, statement: Statement): Promise<Reply> {
  const outcome = await runStatement(pg, statement);
  // Neon drops a pooled connection left inside a transaction; never let one leak into the next request.
  if (outcome.txStatus !== 'I') await runSimple(pg, 'ROLLBACK');
  if (outcome.error !== undefined) return databaseErrorReply(outcome.error);
  if (outcome.rowBytes > MAX_RESPONSE_BYTES) return responseTooLarge();
  return { status: 200, body: outcome.json };
}

async function runBatch(pg: PGlite, statements: Statement[], batch: BatchOptions): Promise<Reply> {
  const begin = await runSimple(pg, beginCommand(batch));
  if (begin.error !== undefined) return abort(pg, begin.error);
  const results: string[] = [];
  let size = 0;
  for (const statement of statements) {
    const outcome = await runStatement(pg, statement);
    if (outcome.error !== undefined) return abort(pg, outcome.error);
    size += outcome.rowBytes;
    if (size > MAX_RESPONSE_BYTES) {
      await runSimple(pg, 'ROLLBACK');
      return responseTooLarge();
    }
    results.push(outcome.json);
  }
  const commit = await runSimple(pg, 'COMMIT');
  if (commit.error !== undefined) return abort(pg, commit.error);
  return { status: 200, body: `{"results":[${results.join(',')}]}` };
}

async function abort(pg: PGlite, error: wire.DatabaseError): Promise<Reply> {
  await runSimple(pg, 'ROLLBACK');
  return databaseErrorReply(error);
}

function beginCommand(batch: BatchOptions): string {
  const modes: string[] = [];
  if (batch.isolationLevel !== undefined) modes.push(`ISOLATION LEVEL ${ISOLATION_LEVELS[batch.isolationLevel]}`);
  if (batch.readOnly) modes.push('READ ONLY');
  if (batch.deferrable) modes.push('DEFERRABLE');
  return modes.length === 0 ? 'BEGIN' : `BEGIN ${modes.join(', ')}`;
}

/**
 * One statement through the extended protocol: text params, text results. Parse rejects several
 * statements in one string (42601), as on Neon. The trailing CopyFail ends a `COPY … FROM STDIN`,
 * which would otherwise abort PGlite; outside copy mode Postgres ignores it.
 */
function runStatement(pg: PGlite, statement: Statement): Promise<Outcome> {
  const { serialize } = protocol;
  return exchange(pg, [
    serialize.parse({ text: statement.query }),
    serialize.bind({ values: statement.params }),
    serialize.describe({ type: 'P' }),
    serialize.execute({}),
    serialize.copyFail('COPY FROM STDIN is not supported over HTTP'),
    serialize.sync(),
  ]);
}

/** BEGIN/COMMIT/ROLLBACK go through the protocol too: exec() inside runExclusive deadlocks. */
function runSimple(pg: PGlite, command: string): Promise<Outcome> {
  return exchange(pg, [protocol.serialize.query(command)]);
}

async function exchange(pg: PGlite, parts: Uint8Array[]): Promise<Outcome> {
  const { messages } = await pg.execProtocol(Buffer.concat(parts), { throwOnError: false });
  return toOutcome(messages);
}

function toOutcome(messages: wire.BackendMessage[]): Outcome {
  let fields: wire.Field[] = [];
  const rows: Param[][] = [];
  let tag = ''; // stays empty for an empty query, as on Neon
  let error: wire.DatabaseError | undefined;
  let txStatus = 'I';
  let rowBytes = 0;
  for (const message of messages) {
    if (message instanceof wire.RowDescriptionMessage) fields = message.fields;
    else if (message instanceof wire.DataRowMessage) {
      rows.push(message.fields);
      // The message length counts itself (4 bytes); the body after the field count (2) is the row.
      rowBytes += message.length - 6;
    } else if (message instanceof wire.CommandCompleteMessage) tag = message.text;
    else if (message instanceof wire.DatabaseError) error ??= message;
    else if (message instanceof wire.ReadyForQueryMessage) txStatus = message.status;
  }
  const json = error === undefined ? resultJson(fields, rows, tag) : '';
  return { txStatus, error, json, rowBytes };
}

function resultJson(fields: wire.Field[], rows: Param[][], tag: string): string {
  return JSON.stringify({
    fields: fields.map((field) => ({
      name: field.name,
      dataTypeID: field.dataTypeID,
      tableID: field.tableID,
      columnID: field.columnID,
      dataTypeSize: field.dataTypeSize,
      dataTypeModifier: field.dataTypeModifier,
      format: 'text',
    })),
    rows,
    ...commandTag(tag),
    // The client always asks for array mode and builds row objects itself.
    rowAsArray: true,
  });
}

/** Neon's reading of a command tag: `INSERT oid n` -> n, else what follows the first word if numeric. */
function commandTag(tag: string): { command: string; rowCount: number | null } {
  const [command, rest] = splitOnce(tag);
  const count = command === 'INSERT' && rest !== undefined ? splitOnce(rest)[1] : rest;
  return { command, rowCount: count !== undefined && /^[+-]?\d+$/.test(count) ? Number(count) : null };
}

function splitOnce(text: string): [string, string | undefined] {
  const space = text.indexOf(' ');
  return space < 0 ? [text, undefined] : [text.slice(0, space), text.slice(space + 1)];
}

// ---- error bodies ----

function databaseErrorReply(error: wire.DatabaseError): Reply {
  const body: Record<string, string | null> = { message: error.message };
  for (const field of ERROR_FIELDS) body[field] = error[field] ?? null;
  return { status: 400, body: JSON.stringify(body) };
}

function responseTooLarge(): Reply {
  return { status: 507, body: requestErrorBody(`response is too large (max is ${MAX_RESPONSE_BYTES} bytes)`) };
}

/** Neon's shape for errors that did not come from Postgres: code and severity are empty strings. */
function requestErrorBody(message: string): string {
  const body: Record<string, string | null> = { message };
  for (const field of ERROR_FIELDS) body[field] = null;
  return JSON.stringify({ ...body, code: '', severity: '' });
}
