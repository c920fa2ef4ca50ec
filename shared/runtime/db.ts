/**
 * The database client: Neon's own driver, `@neondatabase/serverless`, over HTTP, through drizzle's
 * `drizzle-orm/neon-http` driver, pointed at the local stand-in for a loopback host. What a client
 * is and what its errors mean is in shared/core/database.ts.
 */
import { neon, neonConfig } from '@neondatabase/serverless';
import { drizzle } from 'drizzle-orm/neon-http';
import type { Database } from '../core/database.ts';

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Whether `hostname` is this machine (localhost, 127.0.0.1, ::1). */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname);
}

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
  if (LOOPBACK_HOSTS.has(host)) return `http://${host}:${port}/sql`;
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
export function createDb(databaseUrl: string, { signal }: DbOptions = {}): Database {
  const client = neon(databaseUrl, signal ? { fetchOptions: { signal } } : {});
  return drizzle({ client });
}
