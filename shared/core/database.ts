/**
 * The database client's type, for code that receives a client as a parameter (the layers below
 * shared/runtime/, which builds clients: shared/runtime/db.ts).
 */
import type { NeonHttpDatabase } from 'drizzle-orm/neon-http';

/** A drizzle client over Neon's SQL-over-HTTP endpoint. */
export type Database = NeonHttpDatabase;
