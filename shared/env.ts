/**
 * The bindings and variables a worker reads. Only the pipeline reads them; tools never see `env`.
 */
import type { AdmissionEnv } from './concurrency/admission.ts';

export interface Env extends AdmissionEnv {
  /** Postgres connection string: Neon in production, the local stand-in (loopback) in development. */
  DATABASE_URL?: string;
}
