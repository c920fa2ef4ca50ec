/**
 * A fault-injecting HTTP proxy for tests: forwards every request to `target`, except those a test
 * scripted to fail the way a real deployment's infrastructure fails. Tests running inside workerd
 * script it over HTTP:
 *
 * - `POST /__faults {"count": 2, "fault": "serialization_failure"}`: the next 2 queries fail
 *   before reaching the database (nothing is written).
 * - `POST /__faults {"count": 1, "fault": "connection_reset", "when": "after", "match": "insert into documents"}`:
 *   the next query whose SQL contains `insert into documents` (case-insensitive) is forwarded, the
 *   database runs and commits it, and then its answer is lost: the client sees a transient failure
 *   for work that was done.
 * - `POST /__faults {"count": 1, "fault": "hang", "match": "pg_sleep"}`: the next such query is
 *   never answered; the proxy holds it until the client gives up (aborts, or drops the connection).
 * - `POST /__faults [{"count": 1, …, "when": "after"}, {"count": 6, "fault": "connection_reset"}]`:
 *   scripts in turn, each once the one before has failed its count of queries: here one answer
 *   lost after its commit, then the database unreachable for the next 6 queries.
 * - `GET /__seen?match=from "api_keys"&database=keys`: how many queries of that database whose SQL
 *   contains the text (case-insensitive) the proxy has received so far, and how many of those it
 *   held (`hang`) were given up by their client: `{"seen": 3, "abandoned": 1}`.
 *
 * Posting replaces what was scripted before; `{"count": 0, ...}` clears it. Scripts are kept per
 * database name (the last segment of the connection string, `postgres://u:p@host:port/<database>`; `database` in the script, default `edge`), so that test
 * files running in parallel each script their own connection string without disturbing the others.
 * The Neon stand-in behind it ignores the database name.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { keepIdleConnections } from './keep-alive.ts';

/** How an injected failure looks to the client. */
export const FAULTS = {
  /** Neon's answer to a serialization failure: transient, retried. */
  serialization_failure: { status: 400, body: postgresError('40001', 'could not serialize access due to concurrent update') },
  /** The SQL endpoint itself failing: HTTP 503, transient. */
  unavailable: { status: 503, body: { message: 'service unavailable' } },
  /** A permission error: not transient, attempted once. */
  permission_denied: { status: 400, body: postgresError('42501', 'permission denied for table mood_entries') },
  /** The connection drops without an answer (the socket is destroyed): a network error, transient. */
  connection_reset: 'reset',
  /** No answer at all: the query waits until its client gives up. */
  hang: 'hang',
} as const;

export type FaultName = keyof typeof FAULTS;

/** One scripted fault, as a test posts it to `/__faults`. */
export interface FaultScript {
  /** How many matching queries fail; 0 clears the script. */
  count: number;
  fault: FaultName;
  /** `before` (default): the query never reaches the database. `after`: it runs (and commits), then its answer is lost. */
  when?: 'before' | 'after';
  /** Only queries whose SQL contains this text (case-insensitive) fail; default: every query. */
  match?: string;
  /** The database name of the connection string the script applies to (default `edge`). */
  database?: string;
}

/** The database name of `faultyDatabaseUrl`-style connection strings, when a script names none. */
export const DEFAULT_FAULT_DATABASE = 'edge';

/** Queries kept per database for `GET /__seen`; later ones are not counted. */
const MAX_RECEIVED = 10_000;

export interface FaultProxy {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts the proxy on 127.0.0.1 (random port). */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  /** Per database: the scripts still to run, the current one first. */
  const scripts = new Map<string, FaultScript[]>();
  const received = new Map<string, string[]>();
  /** Per database, the SQL of each held query its client gave up. */
  const abandoned = new Map<string, string[]>();
  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    const url = new URL(request.url ?? '/', 'http://proxy');
    if (url.pathname === '/__seen') {
      const match = (url.searchParams.get('match') ?? '').toLowerCase();
      const database = url.searchParams.get('database') ?? DEFAULT_FAULT_DATABASE;
      const count = (log: Map<string, string[]>) => (log.get(database) ?? []).filter((sql) => sql.includes(match)).length;
      return send(response, 200, { seen: count(received), abandoned: count(abandoned) });
    }
    if (request.url === '/__faults') {
      const posted = parseScripts(body);
      if (typeof posted === 'string') return send(response, 400, { error: posted });
      scripts.set(posted[0]?.database ?? DEFAULT_FAULT_DATABASE, posted);
      return send(response, 200, { ok: true });
    }
    const database = databaseOf(request);
    const sql = sqlOf(body);
    const log = received.get(database) ?? [];
    if (log.length < MAX_RECEIVED) received.set(database, [...log, sql]);
    const queue = scripts.get(database) ?? [];
    while (queue.length > 0 && queue[0]!.count <= 0) queue.shift();
    const script = queue[0];
    const faulty = script !== undefined && script.count > 0 && (script.match === undefined || sql.includes(script.match.toLowerCase()));
    if (faulty) script.count--;
    if (faulty && script.fault === 'hang') response.on('close', () => abandoned.set(database, [...(abandoned.get(database) ?? []), sql]));
    if (faulty && script.when !== 'after') return inject(response, script.fault);

    const forwarded = await fetch(new URL(request.url ?? '/', target), {
      method: request.method,
      headers: Object.fromEntries(
        Object.entries(request.headers).filter(([name]) => name !== 'host' && name !== 'content-length'),
      ) as Record<string, string>,
      body: request.method === 'GET' || request.method === 'HEAD' ? undefined : body,
    });
    const answer = await forwarded.text();
    if (faulty) return inject(response, script.fault); // the database has done the work; the answer is lost
    response.writeHead(forwarded.status, { 'content-type': forwarded.headers.get('content-type') ?? 'application/json' });
    response.end(answer);
  });
  keepIdleConnections(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A posted script, or a list of scripts for one database, as a list; or what is wrong with them. */
function parseScripts(body: string): FaultScript[] | string {
  let posted: FaultScript | FaultScript[];
  try {
    posted = JSON.parse(body) as FaultScript | FaultScript[];
  } catch {
    return 'the body must be a JSON fault script, or a list of them';
  }
  const list = Array.isArray(posted) ? posted : [posted];
  for (const script of list) {
    if (typeof script !== 'object' || script === null || !(script.fault in FAULTS))
      return `unknown fault; one of ${Object.keys(FAULTS).join(', ')}`;
    if (script.when !== undefined && script.when !== 'before' && script.when !== 'after') return "when must be 'before' or 'after'";
    if ((script.database ?? DEFAULT_FAULT_DATABASE) !== (list[0]!.database ?? DEFAULT_FAULT_DATABASE))
      return 'the scripts of one list must name the same database';
  }
  return list.map((script) => ({ ...script }));
}

/** The SQL of a request (every statement of a batch), lower case with single spaces, as scripts match it. */
function sqlOf(body: string): string {
  let sql = body;
  try {
    const parsed = JSON.parse(body) as { query?: string; queries?: { query: string }[] };
    sql = parsed.queries ? parsed.queries.map((q) => q.query).join('\n') : (parsed.query ?? body);
  } catch {
    // not a SQL request: match against the raw body
  }
  return sql.toLowerCase().replace(/\s+/g, ' ');
}

/** The database name of the connection string the Neon driver sends with every query. */
function databaseOf(request: IncomingMessage): string {
  const connectionString = request.headers['neon-connection-string'];
  if (typeof connectionString !== 'string' || !URL.canParse(connectionString)) return DEFAULT_FAULT_DATABASE;
  return new URL(connectionString).pathname.slice(1) || DEFAULT_FAULT_DATABASE;
}

function inject(response: ServerResponse, name: FaultName): void {
  const fault = FAULTS[name];
  if (fault === 'hang') return; // held, unanswered, until the client gives up
  if (fault === 'reset') {
    response.socket?.destroy();
    return;
  }
  send(response, fault.status, fault.body);
}

function postgresError(code: string, message: string) {
  return { message, code, severity: 'ERROR', detail: null, hint: null, constraint: null, table: null, column: null, schema: null };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
