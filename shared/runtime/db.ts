/**
 * The database client: Neon's own driver, `@neondatabase/serverless`, over HTTP, through drizzle's
 * `drizzle-orm/neon-http` driver, pointed at the local stand-in for a loopback host. What a client
 * is and what its errors mean is in shared/core/database.ts.
 */
import { neon, neonConfig, type NeonQueryFunction, type NeonQueryPromise } from '@neondatabase/serverless';
import { drizzle } from 'drizzle-orm/neon-http';
import type { Database } from '../core/database.ts';
import { isLoopbackHost } from '../core/loopback.ts';

/** Whether a connection string points at the local stand-in (a loopback host), as in development and tests. */
export function isLocalDatabaseUrl(databaseUrl: string): boolean {
  return URL.canParse(databaseUrl) && isLoopbackHost(new URL(databaseUrl).hostname);
}

/** The driver's own choice of endpoint: Neon's `https://api.<region…>/sql` for a Neon host. */
const neonEndpoint = neonConfig.fetchEndpoint;

/**
 * Where the driver posts each statement (`neonConfig.fetchEndpoint`, the driver's documented
 * setting for local development): a loopback host is the local stand-in, which speaks plain HTTP
 * on its own port; any other host is Neon, where the driver's default applies.
 */
neonConfig.fetchEndpoint = (host, port, options) => {
  if (isLoopbackHost(host)) return `http://${host}:${port}/sql`;
  return typeof neonEndpoint === 'function' ? neonEndpoint(host, port, options) : neonEndpoint;
};

/** Options of {@link createDb}. */
export interface DbOptions {
  /**
   * Aborting it aborts the client's HTTP requests in flight, and fails those sent after (it is
   * passed to every `fetch` through the driver's `fetchOptions`). For a client whose life is one
   * bounded piece of work (a readiness probe); a request's client is bound call by call
   * (shared/runtime/query-signal.ts).
   */
  signal?: AbortSignal;
  /**
   * Every statement runs in a read-only transaction (Neon's `Neon-Batch-Read-Only`): Postgres
   * refuses any write through the client. The gate's reader (shared/auth/gate.ts). Default false.
   */
  readOnly?: boolean;
}

/**
 * A drizzle client for one request over `neon()`: the pg query builders, `execute`, and `batch`
 * as one transaction in one request. Cheap: it holds no connection, only the URL. No relational
 * schema is attached: building drizzle's relational config costs ~90 µs per client.
 *
 * @example
 * const db = createDb(env.DATABASE_URL);
 * const rows = await db.select().from(tasks).limit(10);
 */
export function createDb(databaseUrl: string, { signal, readOnly = false }: DbOptions = {}): Database {
  const client = neon(databaseUrl, { ...(signal && { fetchOptions: { signal } }), ...(readOnly && { readOnly }) });
  return drizzle({ client: readOnly ? readOnlyStatements(client) : client });
}

/**
 * `client` (made with `readOnly`) with every statement in a read-only transaction. drizzle sends a
 * statement with `client.query()` and awaits it, and a batch with `client.transaction()` of such
 * statements, which the driver reads without awaiting them. So a statement awaited alone is sent
 * as a read-only transaction of its own, in the same one request; a batched one runs in the
 * batch's transaction, read-only too.
 */
function readOnlyStatements(client: NeonQueryFunction<false, false>): NeonQueryFunction<false, false> {
  const query = (...args: Parameters<typeof client.query>) => {
    const statement = client.query(...args);
    const alone = () => client.transaction([statement as NeonQueryPromise<false, false>]).then(([result]) => result);
    return Object.defineProperty(statement, 'then', {
      value: (resolve?: (value: unknown) => unknown, reject?: (reason: unknown) => unknown) => alone().then(resolve, reject),
    });
  };
  return Object.assign((...args: Parameters<typeof client>) => client(...args), client, { query }) as NeonQueryFunction<false, false>;
}
