/**
 * `npm run seed`: fills a project with the synthetic corpus (local/corpus.ts), tasks embedded.
 *
 *   npm run seed -- [--documents 50] [--tasks 1000] [--seed 1] [--project-name "Demo project"]
 *
 * With DATABASE_URL set it seeds that database (Neon, or any stand-in). Without it, it seeds the
 * local database of `npm run dev` (.local-data/postgres): through the running `npm run dev` when
 * there is one, otherwise by opening the data directory itself. PGlite's data directory is
 * single-user (a second PGlite opening it would not notice the first: both would write, and the
 * data would be corrupted), so whoever opens it holds a lock file next to it,
 * `.local-data/postgres.lock`, that records its pid and its SQL endpoint.
 *
 * The project is the one with that name (the first created), or a new one; either way a new API
 * key is issued and printed. Documents are added, never replaced: seeding twice doubles them.
 * Embeddings are the offline ones (offline-hashing-v2); with another EMBEDDINGS_PROVIDER, re-embed
 * the tasks with embed-tasks. Ctrl-C stops after the current batch and closes the database cleanly.
 */
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { asc, eq, sql } from 'drizzle-orm';
import { projects } from '../drizzle/schema.ts';
import { EMBED_BATCH_SIZE, embedTasks, storeDocument } from '../functions/documents/lib/ingest.ts';
import { issueApiKey } from '../shared/auth/keys.ts';
import { createDb } from '../shared/runtime/db.ts';
import { offlineEmbeddings } from '../shared/providers/offline.ts';
import { CORPUS_DEFAULTS, generateCorpus, type CorpusOptions } from './corpus.ts';
import { createProject, migrateDatabase } from './database.ts';
import { startNeonStandIn, type NeonStandIn } from './neon-http.ts';

/** Where `npm run dev` keeps its database. */
export const LOCAL_DATA_DIR = fileURLToPath(new URL('../.local-data/postgres', import.meta.url));

/** How far a seed has got; `documents` counts documents whose tasks are all embedded. */
export interface SeedProgress {
  documents: number;
  tasks: number;
  totalDocuments: number;
  totalTasks: number;
  elapsedMs: number;
}

export interface SeedReport {
  documents: number;
  tasks: number;
  /** Tasks stored with a vector. */
  embedded: number;
  /** Tasks whose embedding batch the provider rejected (status `failed`). */
  failed: number;
  elapsedMs: number;
}

/**
 * Generates the corpus and stores it in the project: each document with its tasks
 * (storeDocument), then its tasks embedded offline in batches of EMBED_BATCH_SIZE (embedTasks).
 * `onProgress` is called after every batch; the tables are analyzed at the end. An aborted
 * `signal` stops between batches (it throws the signal's reason); what was written stays.
 */
export async function seedCorpus(
  databaseUrl: string,
  projectId: string,
  corpusOptions: CorpusOptions = {},
  onProgress?: (progress: SeedProgress) => void,
  signal?: AbortSignal,
): Promise<SeedReport> {
  const db = createDb(databaseUrl);
  const corpus = generateCorpus(corpusOptions);
  const started = performance.now();
  const report: SeedReport = { documents: 0, tasks: 0, embedded: 0, failed: 0, elapsedMs: 0 };
  const totals = { totalDocuments: corpus.length, totalTasks: corpusOptions.tasks ?? CORPUS_DEFAULTS.tasks };
  for (const document of corpus) {
    signal?.throwIfAborted();
    const { tasks } = await storeDocument(db, projectId, document);
    for (let start = 0; start < tasks.length; start += EMBED_BATCH_SIZE) {
      signal?.throwIfAborted();
      const batch = tasks.slice(start, start + EMBED_BATCH_SIZE);
      const embedded = await embedTasks(db, projectId, batch, offlineEmbeddings);
      report.embedded += embedded.embedded;
      report.failed += embedded.failed;
      report.tasks += batch.length;
      if (start + EMBED_BATCH_SIZE >= tasks.length) report.documents++;
      report.elapsedMs = performance.now() - started;
      onProgress?.({ documents: report.documents, tasks: report.tasks, ...totals, elapsedMs: report.elapsedMs });
    }
  }
  // Fresh statistics for the planner: PGlite runs no autovacuum, and on Neon it would lag a bulk load.
  await db.execute(sql`analyze documents, tasks`);
  report.elapsedMs = performance.now() - started;
  return report;
}

/** Who holds a local data directory: the process and, once its database is up, its SQL endpoint. */
export interface DataDirHolder {
  pid: number;
  databaseUrl?: string;
  /** The gateway `npm run dev` serves over this database, for the examples others print. */
  gatewayUrl?: string;
}

/** Thrown by {@link openLocalDatabase} when another live process holds the data directory. */
export class DataDirBusyError extends Error {
  override readonly name = 'DataDirBusyError';
  constructor(dataDir: string, holder: DataDirHolder) {
    super(
      `The local database ${dataDir} is in use by process ${holder.pid} (\`npm run dev\` or \`npm run seed\`). ` +
        "PGlite's data directory is single-user: wait for that process to finish, or stop it. If no such process is running, " +
        `delete ${lockPath(dataDir)}.`,
    );
  }
}

/**
 * Opens the Neon stand-in on a file-backed data directory, holding its lock file
 * (`<dataDir>.lock`) for as long as the stand-in runs; the lock names this process and the
 * stand-in's connection string, so {@link localDatabaseHolder} can point others to it.
 * Throws {@link DataDirBusyError} when a live process holds the directory; a lock left by a dead
 * process is taken over. `gatewayUrl` is recorded in the lock too (`npm run dev`'s address).
 */
export async function openLocalDatabase(
  dataDir: string = LOCAL_DATA_DIR,
  { gatewayUrl, port }: { gatewayUrl?: string; port?: number } = {},
): Promise<NeonStandIn> {
  const lock = lockPath(dataDir);
  mkdirSync(dirname(lock), { recursive: true });
  claimLock(dataDir, lock);
  const release = () => {
    if (localDatabaseHolder(dataDir)?.pid === process.pid) unlinkSync(lock);
  };
  process.once('exit', release);
  let neon: NeonStandIn;
  try {
    neon = await startNeonStandIn({ dataDir, port });
  } catch (error) {
    release();
    throw error;
  }
  writeFileSync(lock, JSON.stringify({ pid: process.pid, databaseUrl: neon.connectionString, gatewayUrl } satisfies DataDirHolder));
  return {
    ...neon,
    async close() {
      await neon.close();
      release();
    },
  };
}

/** The live process holding `dataDir`, or undefined when it is free (or its holder died). */
export function localDatabaseHolder(dataDir: string = LOCAL_DATA_DIR): DataDirHolder | undefined {
  let holder: DataDirHolder;
  try {
    holder = JSON.parse(readFileSync(lockPath(dataDir), 'utf8')) as DataDirHolder;
  } catch {
    // Missing, or read while its holder writes it.
    return undefined;
  }
  return isAlive(holder.pid) ? holder : undefined;
}

function lockPath(dataDir: string): string {
  return `${dataDir.replace(/[/\\]+$/, '')}.lock`;
}

function claimLock(dataDir: string, lock: string): void {
  for (let attempt = 0; ; attempt++) {
    try {
      // 'wx': created only if absent, so two processes never both get it.
      writeFileSync(lock, JSON.stringify({ pid: process.pid } satisfies DataDirHolder), { flag: 'wx' });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
    }
    const holder = localDatabaseHolder(dataDir);
    if (holder) throw new DataDirBusyError(dataDir, holder);
    unlinkSync(lock); // left by a process that died
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Finds the project by name (the oldest), or creates it; either way issues a new API key. */
async function projectWithKey(databaseUrl: string, name: string): Promise<{ projectId: string; apiKey: string; created: boolean }> {
  const db = createDb(databaseUrl);
  const [existing] = await db
    .select({ id: projects.id })
    .from(projects)
    .where(eq(projects.name, name))
    .orderBy(asc(projects.createdAt))
    .limit(1);
  if (!existing) return { ...(await createProject(databaseUrl, name)), created: true };
  const { key: apiKey } = await issueApiKey(db, { projectId: existing.id, name: 'npm run seed' });
  return { projectId: existing.id, apiKey, created: false };
}

/** An in-place progress bar of a seed on stderr, with counts and rate (a line per 10 % when stderr is not a terminal). */
export function progressBar(): { update(progress: SeedProgress): void; done(): void } {
  const WIDTH = 28;
  const tty = process.stderr.isTTY;
  let lastDraw = 0;
  let lastDecile = -1;
  return {
    update(p) {
      const share = p.totalTasks ? p.tasks / p.totalTasks : 1;
      const now = performance.now();
      const finished = p.tasks === p.totalTasks;
      if (tty ? now - lastDraw < 100 && !finished : Math.floor(share * 10) === lastDecile) return;
      lastDraw = now;
      lastDecile = Math.floor(share * 10);
      const rate = p.tasks / (p.elapsedMs / 1000);
      const eta = rate > 0 ? (p.totalTasks - p.tasks) / rate : 0;
      const filled = Math.round(share * WIDTH);
      const line =
        `[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${(share * 100).toFixed(0).padStart(3)} % ` +
        `${p.tasks.toLocaleString('en')}/${p.totalTasks.toLocaleString('en')} tasks, ${p.documents}/${p.totalDocuments} documents, ` +
        `${Math.round(rate).toLocaleString('en')} tasks/s, ETA ${clock(eta)}`;
      process.stderr.write(tty ? `\r${line}\x1b[K` : `${line}\n`);
    },
    done() {
      if (tty) process.stderr.write('\n');
    },
  };
}

function clock(seconds: number): string {
  const s = Math.round(seconds);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

function integerOption(value: string, name: string, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new RangeError(`--${name} must be an integer >= ${min}, got '${value}'`);
  return n;
}

/** The command line: the corpus to seed and the project's name, or undefined after printing the help. */
function parseCommand(): { corpus: Required<CorpusOptions>; projectName: string } | undefined {
  const { values } = parseArgs({
    options: {
      documents: { type: 'string', default: String(CORPUS_DEFAULTS.documents) },
      tasks: { type: 'string', default: String(CORPUS_DEFAULTS.tasks) },
      seed: { type: 'string', default: String(CORPUS_DEFAULTS.seed) },
      'project-name': { type: 'string', default: 'Demo project' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(
      'npm run seed -- [--documents N] [--tasks N] [--seed N] [--project-name NAME]\n' +
        `Defaults: ${CORPUS_DEFAULTS.documents} documents, ${CORPUS_DEFAULTS.tasks} tasks, seed ${CORPUS_DEFAULTS.seed}, project "Demo project".\n` +
        'Seeds DATABASE_URL when set, else the local database of `npm run dev` (.local-data/postgres).',
    );
    return undefined;
  }
  const corpus: Required<CorpusOptions> = {
    documents: integerOption(values.documents, 'documents', 1),
    tasks: integerOption(values.tasks, 'tasks', 1),
    seed: integerOption(values.seed, 'seed', 0),
  };
  if (corpus.tasks < corpus.documents)
    throw new RangeError(`--tasks (${corpus.tasks}) must be at least --documents (${corpus.documents}): every document gets a task.`);

  return { corpus, projectName: values['project-name'] };
}

/** Where to seed: DATABASE_URL, else `npm run dev`'s database through the process that holds it, else the local database opened here. */
async function openTarget(): Promise<{ databaseUrl: string; gatewayUrl: string; opened?: NeonStandIn }> {
  const gatewayUrl = `http://127.0.0.1:${process.env.PORT ?? 8787}`;
  const databaseUrl = process.env.DATABASE_URL;
  if (databaseUrl) {
    console.log(`Seeding DATABASE_URL (${new URL(databaseUrl).host}).`);
    return { databaseUrl, gatewayUrl };
  }
  const holder = localDatabaseHolder();
  if (holder?.databaseUrl) {
    console.log(`Seeding the local database through the process that has it open (${holder.pid}, normally \`npm run dev\`).`);
    return { databaseUrl: holder.databaseUrl, gatewayUrl: holder.gatewayUrl ?? gatewayUrl };
  }
  console.log(`Opening the local database ${LOCAL_DATA_DIR} (PGlite takes a few seconds to start)...`);
  const opened = await openLocalDatabase();
  return { databaseUrl: opened.connectionString, gatewayUrl, opened };
}

async function main(): Promise<void> {
  const command = parseCommand();
  if (!command) return;
  const { corpus, projectName } = command;
  // The whole command, opening the database and migrating included: what a person waiting sees.
  const commandStarted = performance.now();
  const { databaseUrl, gatewayUrl, opened } = await openTarget();

  const stop = new AbortController();
  process.once('SIGINT', () => {
    process.stderr.write('\nStopping after the current batch...\n');
    stop.abort();
  });
  try {
    await migrateDatabase(databaseUrl);
    const project = await projectWithKey(databaseUrl, projectName);
    console.log(`${project.created ? 'Created' : 'Using'} project "${projectName}" (${project.projectId}).`);
    const bar = progressBar();
    const report = await seedCorpus(databaseUrl, project.projectId, corpus, bar.update, stop.signal)
      .catch((error: unknown) => {
        if (stop.signal.aborted) return undefined;
        throw error;
      })
      .finally(bar.done);
    if (!report) {
      console.error(`Interrupted: the documents written so far stay in the project. Its API key: ${project.apiKey}`);
      process.exitCode = 130;
      return;
    }
    const seconds = report.elapsedMs / 1000;
    const commandSeconds = (performance.now() - commandStarted) / 1000;
    console.log(
      `Seeded ${report.documents.toLocaleString('en')} documents and ${report.tasks.toLocaleString('en')} tasks in ${commandSeconds.toFixed(1)} s ` +
        `(${seconds.toFixed(1)} s storing and embedding them, ${Math.round(report.tasks / seconds).toLocaleString('en')} tasks/s; the rest opening and migrating the database): ` +
        `${report.embedded.toLocaleString('en')} embedded with ${offlineEmbeddings.id}` +
        `${report.failed ? `, ${report.failed.toLocaleString('en')} failed (retry them with embed-tasks)` : ''}.`,
    );
    console.log(`API key for this project: ${project.apiKey}`);
    console.log(
      `Try it (with \`npm run dev\` running):\n  curl -s ${gatewayUrl}/tools/semantic-search -H 'Authorization: Bearer ${project.apiKey}' ` +
        `-H 'Content-Type: application/json' -d '{"query":"migrate the primary Postgres database","limit":5}'`,
    );
  } finally {
    await opened?.close();
  }
}

if (import.meta.main) {
  await main().catch((error: unknown) => {
    console.error(error instanceof DataDirBusyError || error instanceof RangeError ? error.message : error);
    process.exitCode = 1;
  });
}
