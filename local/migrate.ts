/** `npm run db:migrate`: applies the drizzle migrations to DATABASE_URL (Neon or local). */
import { migrateDatabase } from './database.ts';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error('Set DATABASE_URL to the Postgres connection string to migrate (Neon, or the local stand-in).');
  process.exit(1);
}
await migrateDatabase(databaseUrl);
console.log('Migrations applied.');
