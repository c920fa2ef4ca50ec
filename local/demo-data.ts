/**
 * The local data of `npm run dev` (`.local-data/`): the Neon stand-in's data directory and the
 * demo project's key, in `demo-project.json`.
 *
 * The first start builds it all or nothing. Everything (migrations, the demo project and its key,
 * the sample plans with their embeddings, the study planner's demo data) is written into a
 * staging folder, `.local-data/first-start/`, which is moved into place only once complete:
 * `demo-project.json` first, then the data directory, whose arrival is the commit. Stopped at any
 * moment (Ctrl-C, a crash, a power cut), the next start finds no data directory, discards the
 * staging folder and begins again, so a demo project is never left half seeded.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { and, eq } from 'drizzle-orm';
import { apiKeys } from '../drizzle/schema.ts';
import { hashApiKey } from '../shared/auth/keys.ts';
import { createDb } from '../shared/runtime/db.ts';
import type { CorpusOptions } from './corpus.ts';
import { createProject, migrateDatabase, type CreatedProject } from './database.ts';
import type { NeonStandIn } from './neon-http.ts';
import { DataDirBusyError, localDatabaseHolder, openLocalDatabase, progressBar, seedCorpus } from './seed.ts';
import { hasStudyData, seedStudy } from './study-seed.ts';

/** Where `npm run dev` keeps its data. */
export const LOCAL_DATA = fileURLToPath(new URL('../.local-data', import.meta.url));

/** The demo project's name. */
const DEMO_PROJECT = 'Demo project';

/** Options of {@link openDemoData}. */
export interface DemoDataOptions {
  /** The folder holding the data directory and the demo project's key. Default {@link LOCAL_DATA}. */
  root?: string;
  /** The demo project's API key (`DEV_API_KEY`); a random one when unset. */
  apiKey?: string;
  /** The sample plans seeded on first start. Default: the corpus defaults (50 documents, 1,000 tasks). */
  corpus?: CorpusOptions;
  /** The gateway served over this database, recorded for `npm run seed` to print. */
  gatewayUrl?: string;
  /** The port of the Neon stand-in that serves the database; 0 (the default) for a free one. */
  databasePort?: number;
}

/** The local database, open, and the demo project in it. */
export interface DemoData {
  neon: NeonStandIn;
  demo: CreatedProject;
}

/**
 * Opens the local database with its demo project, building both on first start (all or nothing,
 * with a progress bar), and applies any migration not yet applied. A data directory made by
 * `npm run seed` before any `npm run dev` gets its demo project in place.
 */
export async function openDemoData({
  root = LOCAL_DATA,
  apiKey,
  corpus,
  gatewayUrl,
  databasePort,
}: DemoDataOptions = {}): Promise<DemoData> {
  const dataDir = join(root, 'postgres');
  const demoFile = join(root, 'demo-project.json');
  if (!existsSync(dataDir)) await firstStart(root, { apiKey, corpus });
  const neon = await openLocalDatabase(dataDir, { gatewayUrl, port: databasePort });
  try {
    await migrateDatabase(neon.connectionString);
    const saved = existsSync(demoFile) ? (JSON.parse(readFileSync(demoFile, 'utf8')) as CreatedProject) : undefined;
    if (!saved) {
      const demo = await seedDemoProject(neon.connectionString, { apiKey, corpus });
      writeFileSync(demoFile, JSON.stringify(demo, null, 2));
      return { neon, demo };
    }
    // A data directory from before the study planner existed gets its demo data now.
    if (!(await hasStudyData(neon.connectionString, saved.projectId))) await seedStudy(neon.connectionString, saved.projectId);
    return { neon, demo: await withKey(neon.connectionString, saved, apiKey) };
  } catch (error) {
    await neon.close();
    throw error;
  }
}

/** Builds the whole local data in the staging folder, then moves it into place. */
async function firstStart(root: string, options: Pick<DemoDataOptions, 'apiKey' | 'corpus'>): Promise<void> {
  const staging = join(root, 'first-start');
  const stagingDataDir = join(staging, 'postgres');
  const holder = localDatabaseHolder(stagingDataDir);
  if (holder) throw new DataDirBusyError(stagingDataDir, holder);
  rmSync(staging, { recursive: true, force: true }); // what an interrupted first start left
  mkdirSync(staging, { recursive: true });
  console.log('First start: building the local database and its demo project (all or nothing: if stopped, the next start begins again).');
  const neon = await openLocalDatabase(stagingDataDir);
  let demo: CreatedProject;
  try {
    await migrateDatabase(neon.connectionString);
    demo = await seedDemoProject(neon.connectionString, options);
  } finally {
    await neon.close();
  }
  writeFileSync(join(staging, 'demo-project.json'), JSON.stringify(demo, null, 2));
  renameSync(join(staging, 'demo-project.json'), join(root, 'demo-project.json'));
  renameSync(stagingDataDir, join(root, 'postgres')); // the commit
  rmSync(staging, { recursive: true, force: true });
}

/** Creates the demo project and seeds it: the sample plans (with a progress bar), then the study planner's data. */
async function seedDemoProject(
  databaseUrl: string,
  { apiKey, corpus }: Pick<DemoDataOptions, 'apiKey' | 'corpus'>,
): Promise<CreatedProject> {
  const demo = await createProject(databaseUrl, DEMO_PROJECT, apiKey);
  console.log('Seeding the demo project with sample project plans (embedded offline)...');
  const bar = progressBar();
  const seeded = await seedCorpus(databaseUrl, demo.projectId, corpus, bar.update).finally(bar.done);
  console.log(`Seeded ${seeded.documents} documents with ${seeded.tasks} tasks in ${(seeded.elapsedMs / 1000).toFixed(1)} s.`);
  console.log('Seeding the study planner: plans, quiz topics and attempts, due flashcards and a conversation...');
  await seedStudy(databaseUrl, demo.projectId);
  return demo;
}

/** The saved demo project, with `apiKey` (when given and new) added to it as another key. */
async function withKey(databaseUrl: string, saved: CreatedProject, apiKey: string | undefined): Promise<CreatedProject> {
  if (!apiKey || apiKey === saved.apiKey) return saved;
  const db = createDb(databaseUrl);
  const keyHash = await hashApiKey(apiKey);
  const [existing] = await db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.keyHash, keyHash), eq(apiKeys.projectId, saved.projectId)));
  if (!existing)
    await db.insert(apiKeys).values({ projectId: saved.projectId, keyHash, keyPrefix: apiKey.slice(0, 8), name: 'DEV_API_KEY' });
  return { projectId: saved.projectId, apiKey };
}
