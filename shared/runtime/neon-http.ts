/**
 * A client of Neon's SQL-over-HTTP endpoint, shaped as drizzle's neon-http session expects its
 * client: `client(query, params, options)` and `client.transaction(queries, options)`. It speaks
 * exactly what @neondatabase/serverless's `neon()` speaks (shared/notes: one POST per statement or
 * per batch, Postgres text in and out, the same type parsing, the same `NeonDbError`), without the
 * rest of that package: its WebSocket pool, node-postgres and Buffer shims weigh 145 KiB minified,
 * a third of a tool's bundle, and a worker only ever uses the HTTP path.
 *
 * test/local/neon-client.test.ts runs the same statements through this client and through
 * `neon()` against the Neon stand-in, and requires the same answers.
 */

/** Options of {@link neonHttp}. */
export interface NeonHttpOptions {
  /** Aborting it aborts the requests in flight, and fails those sent after. */
  signal?: AbortSignal;
}

/** How one statement's rows come back: arrays (drizzle's selects) or objects (`db.execute`), and with their fields. */
export interface QueryOptions {
  arrayMode?: boolean;
  fullResults?: boolean;
}

/** Transaction options: Neon's batch headers. */
export interface TransactionOptions extends QueryOptions {
  isolationLevel?: 'ReadUncommitted' | 'ReadCommitted' | 'RepeatableRead' | 'Serializable';
  readOnly?: boolean;
  deferrable?: boolean;
}

/** A field of a result, as Neon describes it. */
interface Field {
  name: string;
  dataTypeID: number;
}

/** A statement's result as Neon sends it (rows of Postgres text), and as it is returned with `fullResults`. */
export interface QueryResult {
  fields: Field[];
  rows: unknown[];
  rowCount: number | null;
  command: string;
  rowAsArray?: boolean;
}

/** The error of a statement Postgres refused (HTTP 400), or of an endpoint that failed or could not be reached. */
export class NeonDbError extends Error {
  override name = 'NeonDbError';
  severity?: string;
  code?: string;
  detail?: string;
  hint?: string;
  position?: string;
  internalPosition?: string;
  internalQuery?: string;
  where?: string;
  schema?: string;
  table?: string;
  column?: string;
  dataType?: string;
  constraint?: string;
  file?: string;
  line?: string;
  routine?: string;
  /** The network error, when the endpoint could not be reached. */
  sourceError?: unknown;
}

const ERROR_FIELDS = ['severity', 'code', 'detail', 'hint', 'position', 'internalPosition', 'internalQuery', 'where', 'schema', 'table', 'column', 'dataType', 'constraint', 'file', 'line', 'routine'] as const;

/** One statement: sent when awaited, or with others by `transaction`. */
export class NeonQuery implements PromiseLike<unknown> {
  readonly #client: NeonHttpClient;
  readonly query: string;
  readonly params: readonly unknown[];
  readonly options: QueryOptions;

  constructor(client: NeonHttpClient, query: string, params: readonly unknown[], options: QueryOptions) {
    this.#client = client;
    this.query = query;
    this.params = params;
    this.options = options;
  }

  then<A = unknown, B = never>(onfulfilled?: ((value: unknown) => A | PromiseLike<A>) | null, onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.#client.send(this).then(onfulfilled, onrejected);
  }
}

/** The client: a function making statements, with `transaction`. */
export interface NeonHttpClient {
  (query: string, params?: readonly unknown[], options?: QueryOptions): NeonQuery;
  /** Runs the statements in one transaction, in one request; the results in order. */
  transaction(queries: NeonQuery[], options?: TransactionOptions): Promise<unknown[]>;
  /** @internal Sends one statement. */
  send(query: NeonQuery): Promise<unknown>;
}

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Whether `hostname` is a loopback host: a database there is the local stand-in. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname);
}

/** The package's name in `application_name`, as the Neon driver sets it. */
const APPLICATION_NAME = 'edge-tools';

/**
 * The SQL endpoint of a connection string: Neon's `https://api.<region…>/sql` (the host with its
 * first label replaced by `api`), or, for a loopback host (the local stand-in), plain HTTP on its
 * own port.
 */
export function sqlEndpoint(connectionString: string): string {
  const { hostname, port } = new URL(connectionString);
  if (isLoopbackHost(hostname)) return `http://${hostname}:${port}/sql`;
  return `https://${hostname.replace(/^[^.]+\./, 'api.')}/sql`;
}

/**
 * A client of the database at `connectionString` (`postgres://user:password@host/db`).
 *
 * @example
 * const client = neonHttp(env.DATABASE_URL);
 * const { rows } = (await client('select $1::int as n', [1], { fullResults: true })) as QueryResult;
 */
export function neonHttp(connectionString: string, { signal }: NeonHttpOptions = {}): NeonHttpClient {
  const url = new URL(connectionString);
  if (!url.searchParams.has('application_name')) url.searchParams.set('application_name', APPLICATION_NAME);
  const endpoint = sqlEndpoint(connectionString);

  async function post(body: unknown, headers: Record<string, string>): Promise<unknown> {
    let response: Response;
    try {
      // The global fetch, looked up per request (benches wrap it to count the database's requests).
      response = await fetch(endpoint, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'Neon-Connection-String': url.href, 'Neon-Raw-Text-Output': 'true', 'Neon-Array-Mode': 'true', ...headers },
        signal,
      });
    } catch (cause) {
      throw Object.assign(new NeonDbError(`Error connecting to database: ${cause}`), { sourceError: cause });
    }
    if (response.ok) return response.json();
    if (response.status === 400) {
      const fields = (await response.json()) as Record<string, string | undefined> & { message: string };
      const error = new NeonDbError(fields.message);
      for (const field of ERROR_FIELDS) error[field] = fields[field] ?? undefined;
      throw error;
    }
    throw new NeonDbError(`Server error (HTTP status ${response.status}): ${await response.text()}`);
  }

  const client = ((query: string, params: readonly unknown[] = [], options: QueryOptions = {}) => new NeonQuery(client, query, params, options)) as NeonHttpClient;
  client.send = async (query) => processResult((await post(statement(query), {})) as QueryResult, query.options);
  client.transaction = async (queries, options = {}) => {
    const headers: Record<string, string> = {};
    if (options.isolationLevel !== undefined) headers['Neon-Batch-Isolation-Level'] = options.isolationLevel;
    if (options.readOnly !== undefined) headers['Neon-Batch-Read-Only'] = String(options.readOnly);
    if (options.deferrable !== undefined) headers['Neon-Batch-Deferrable'] = String(options.deferrable);
    const { results } = (await post({ queries: queries.map(statement) }, headers)) as { results?: QueryResult[] };
    if (!Array.isArray(results)) throw new NeonDbError('Neon internal error: unexpected result format');
    return results.map((result, index) => processResult(result, { ...options, ...queries[index]!.options }));
  };
  return client;
}

function statement({ query, params }: NeonQuery): { query: string; params: (string | null)[] } {
  return { query, params: params.map(toPostgresText) };
}

/** Rows of Postgres text to values, by each field's type, as arrays or objects; the whole result with `fullResults`. */
function processResult(result: QueryResult, { arrayMode = false, fullResults = false }: QueryOptions): unknown {
  const parsers = result.fields.map((field) => TYPE_PARSERS.get(field.dataTypeID) ?? identity);
  const names = result.fields.map((field) => field.name);
  const parse = (value: unknown, index: number) => (value === null ? null : parsers[index]!(value as string));
  const rows = (result.rows as unknown[][]).map((row) => (arrayMode ? row.map(parse) : Object.fromEntries(row.map((value, index) => [names[index], parse(value, index)]))));
  return fullResults ? { ...result, rows, rowAsArray: arrayMode } : rows;
}

// ---- Parameters: JavaScript values to Postgres text (node-postgres' prepareValue) ----

/** A parameter as the text Postgres reads: arrays as array literals, objects as JSON, dates as ISO timestamps. */
export function toPostgresText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Uint8Array) return `\\x${[...value].map((byte) => byte.toString(16).padStart(2, '0')).join('')}`;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return arrayLiteral(value);
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function arrayLiteral(values: readonly unknown[]): string {
  const items = values.map((value) => {
    if (value === null || value === undefined) return 'NULL';
    if (Array.isArray(value)) return arrayLiteral(value);
    return `"${toPostgresText(value)!.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  });
  return `{${items.join(',')}}`;
}

// ---- Results: Postgres text to JavaScript values (the Neon driver's type parsers) ----

type Parser = (text: string) => unknown;

const identity: Parser = (text) => text;
const integer: Parser = (text) => Number.parseInt(text, 10);
const float: Parser = (text) => Number.parseFloat(text);
const boolean: Parser = (text) => text === 'TRUE' || text === 't' || text === 'true' || text === 'y' || text === 'yes' || text === 'on' || text === '1';
const json: Parser = (text) => JSON.parse(text);

/**
 * Parsers by type oid. Types not listed stay text: int8 and numeric (no precision lost), uuid,
 * text, vector (drizzle parses it), and dates, times and intervals, which drizzle's neon-http
 * driver sets to stay text too.
 */
const TYPE_PARSERS: ReadonlyMap<number, Parser> = new Map<number, Parser>([
  [16, boolean],
  [21, integer],
  [23, integer],
  [26, integer],
  [700, float],
  [701, float],
  [114, json],
  [3802, json],
  // Arrays of the above; arrays of other types are arrays of text.
  [1000, arrayOf(boolean)],
  [1005, arrayOf(integer)],
  [1007, arrayOf(integer)],
  [1028, arrayOf(integer)],
  [1021, arrayOf(float)],
  [1022, arrayOf(float)],
  [199, arrayOf(json)],
  [3807, arrayOf(json)],
  // text, char, varchar, int8, uuid, regproc, macaddr, inet, time, timetz. Arrays of numeric and
  // of dates, timestamps and intervals stay one text, as drizzle's neon-http driver sets them.
  ...[1009, 1014, 1015, 1016, 2951, 1008, 1040, 1041, 1183, 1270].map((oid): [number, Parser] => [oid, arrayOf(identity)]),
]);

function arrayOf(parse: Parser): Parser {
  return (text) => parseArrayLiteral(text, parse);
}

/** A Postgres array literal (`{1,2}`, `{"a b",NULL}`, `{{1},{2}}`) with each element parsed. */
export function parseArrayLiteral(text: string, parse: Parser): unknown[] {
  let position = text.indexOf('{'); // skips a dimension decoration such as `[0:1]=`
  const read = (): unknown[] => {
    const values: unknown[] = [];
    position++; // {
    while (position < text.length) {
      const char = text[position];
      if (char === '}') {
        position++;
        return values;
      }
      if (char === ',') {
        position++;
      } else if (char === '{') {
        values.push(read());
      } else if (char === '"') {
        let value = '';
        position++;
        while (text[position] !== '"') {
          if (text[position] === '\\') position++;
          value += text[position++];
        }
        position++;
        values.push(parse(value));
      } else {
        const end = text.slice(position).search(/[,}]/);
        const value = text.slice(position, position + end);
        position += end;
        values.push(value === 'NULL' ? null : parse(value));
      }
    }
    return values;
  };
  return read();
}
