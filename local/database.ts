/**
 * Database chores shared by `npm run dev`, `npm run db:migrate`, the seed and the test setup:
 * applying the drizzle migrations and creating a project with its API key.
 */
import { fileURLToPath } from 'node:url';
import { migrate } from 'drizzle-orm/neon-http/migrator';
import { apiKeys, projects } from '../drizzle/schema.ts';
import { generateApiKey, hashApiKey } from '../shared/runtime/auth.ts';
import { createDb } from '../shared/runtime/db.ts';

const MIGRATIONS_FOLDER = fileURLToPath(new URL('../drizzle/migrations', import.meta.url));

/** Applies every migration not yet applied (Neon or the local stand-in alike). */
export async function migrateDatabase(databaseUrl: string): Promise<void> {
  await migrate(createDb(databaseUrl), { migrationsFolder: MIGRATIONS_FOLDER });
}

export type CreatedProject = {
  projectId: string;
  apiKey: string;
};

/** Creates a project and an API key for it (a new random key unless one is given). */
export async function createProject(databaseUrl: string, name: string, apiKey = generateApiKey()): Promise<CreatedProject> {
  const db = createDb(databaseUrl);
  const [project] = await db.insert(projects).values({ name }).returning({ id: projects.id });
  await db.insert(apiKeys).values({
    projectId: project!.id,
    keyHash: await hashApiKey(apiKey),
    keyPrefix: apiKey.slice(0, 8),
    name: `${name} key`,
  });
  return { projectId: project!.id, apiKey };
}
