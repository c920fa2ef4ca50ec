/**
 * The bindings and variables a worker reads. Only the pipeline reads them; tools never see `env`.
 */
export interface Env {
  /** Postgres connection string: Neon in production, the local stand-in (loopback) in development. */
  DATABASE_URL?: string;
}
