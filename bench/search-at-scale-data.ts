/**
 * The data of the search-at-scale bench (bench/search-at-scale.ts): clustered synthetic unit
 * vectors of 100,000 tasks in eight projects, generated from a seed, and the database that holds
 * them, built once (binary COPY into PGlite, the search index built after the load) and cached in
 * .bench-data/ under a key of the data's parameters and the migrations.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { sql } from 'drizzle-orm';
import { EMBEDDING_DIMENSIONS, SEARCH_INDEX } from '../drizzle/schema.ts';
import { seededRandom } from '../local/random.ts';
import { createProject, migrateDatabase } from '../local/database.ts';
import { startNeonStandIn } from '../local/neon-http.ts';
import { createDb } from '../shared/runtime/db.ts';
import { thousands } from './measure.ts';

const DIMENSIONS = EMBEDDING_DIMENSIONS;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CACHE = join(ROOT, '.bench-data', 'search-at-scale');

/** The data (its parameters key the cached database) and the runs. */
export const DATA = {
  seed: 12,
  themes: 24,
  topicsPerTheme: 8,
  /** A topic is its theme plus this much of its own direction: topics of one theme are alike. */
  topicWeight: 0.8,
  /** Noise around a topic, scaled per topic by 0.5–1.5: a task's similarity to its topic is about 0.6–0.9. */
  spread: 0.9,
  /** Tasks per project; the first also holds tasks of a previous model, zero vectors and pending tasks. */
  projects: [48_000, 24_000, 12_000, 8_000, 4_000, 2_000, 1_000, 1_000],
  topicShare: 0.5,
  previousModelTasks: 8_000,
  zeroVectors: 20,
  pendingTasks: 500,
  tasksPerDocument: 250,
  model: 'bench-clustered-v2',
  previousModel: 'bench-clustered-v1',
} as const;

/** How the database is built: the memory the index build gets, and the rows of one COPY. */
export const BUILD = { maintenanceWorkMem: '1GB', copyRows: 4_000 } as const;

// ---- the data ------------------------------------------------------------------------------------

export interface Dataset {
  /** Row-major, one unit vector per task (zeros for zero vectors and pending tasks). */
  vectors: Float32Array;
  tasks: {
    project: number;
    document: number;
    position: number;
    model: string | null;
    status: 'completed' | 'pending';
  }[];
  /** Per document: its project. */
  documents: number[];
  /** Per project: the topics it uses. */
  projectTopics: number[][];
  topics: { direction: Float32Array; sigma: number }[];
}

function normalise(v: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!;
  norm = Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) v[i]! /= norm;
  return v;
}

/** Standard normal samples, two per Box–Muller draw. */
export function gaussians(random: () => number): () => number {
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const value = spare;
      spare = undefined;
      return value;
    }
    const radius = Math.sqrt(-2 * Math.log(1 - random()));
    const angle = 2 * Math.PI * random();
    spare = radius * Math.sin(angle);
    return radius * Math.cos(angle);
  };
}

/** A point around a topic, written into `out`. */
export function around(topic: Dataset['topics'][number], gaussian: () => number, out: Float32Array): Float32Array {
  for (let i = 0; i < DIMENSIONS; i++) out[i] = topic.direction[i]! + topic.sigma * gaussian();
  return normalise(out);
}

export function generate(): Dataset {
  const random = seededRandom(DATA.seed);
  const gaussian = gaussians(random);
  const randomUnit = () => normalise(Float32Array.from({ length: DIMENSIONS }, gaussian));
  const topics: Dataset['topics'] = [];
  for (let t = 0; t < DATA.themes; t++) {
    const theme = randomUnit();
    for (let s = 0; s < DATA.topicsPerTheme; s++) {
      const own = randomUnit();
      const direction = normalise(Float32Array.from(theme, (x, i) => x + DATA.topicWeight * own[i]!));
      topics.push({ direction, sigma: ((0.5 + random()) * DATA.spread) / Math.sqrt(DIMENSIONS) });
    }
  }
  const projectTopics = DATA.projects.map(() => topics.map((_, i) => i).filter(() => random() < DATA.topicShare));

  // Documents of every project, interleaved in a seeded order.
  const documents: number[] = DATA.projects.flatMap((tasks, project) =>
    new Array<number>(Math.ceil(tasks / DATA.tasksPerDocument)).fill(project),
  );
  for (let i = documents.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [documents[i], documents[j]] = [documents[j]!, documents[i]!];
  }
  const remaining = [...DATA.projects];
  const total = DATA.projects.reduce((a, b) => a + b, 0);
  const vectors = new Float32Array(total * DIMENSIONS);
  const tasks: Dataset['tasks'] = [];
  documents.forEach((project, document) => {
    const count = Math.min(DATA.tasksPerDocument, remaining[project]!);
    remaining[project]! -= count;
    for (let position = 0; position < count; position++) {
      const own = projectTopics[project]!;
      around(
        topics[own[Math.floor(random() * own.length)]!]!,
        gaussian,
        vectors.subarray(tasks.length * DIMENSIONS, (tasks.length + 1) * DIMENSIONS),
      );
      tasks.push({ project, document, position, model: DATA.model, status: 'completed' });
    }
  });
  // The largest project's oddities, on tasks drawn at random.
  const first = tasks.flatMap((task, i) => (task.project === 0 ? [i] : []));
  const pick = (n: number) => Array.from({ length: n }, () => first.splice(Math.floor(random() * first.length), 1)[0]!);
  for (const i of pick(DATA.previousModelTasks)) tasks[i]!.model = DATA.previousModel;
  for (const i of pick(DATA.zeroVectors)) vectors.fill(0, i * DIMENSIONS, (i + 1) * DIMENSIONS);
  for (const i of pick(DATA.pendingTasks)) {
    vectors.fill(0, i * DIMENSIONS, (i + 1) * DIMENSIONS);
    Object.assign(tasks[i]!, { model: null, status: 'pending' });
  }
  return { vectors, tasks, documents, projectTopics, topics };
}

/** Deterministic ids: the same rows in every build. */
function uuidOf(kind: number, n: number): string {
  const hex = n.toString(16).padStart(12, '0');
  return `00000000-0000-4000-8${kind.toString(16).padStart(3, '0')}-${hex}`;
}
export const taskId = (i: number) => uuidOf(1, i);
const documentId = (i: number) => uuidOf(2, i);

// ---- the cached database -------------------------------------------------------------------------

export interface Build {
  projectIds: string[];
  loadSeconds: number;
  indexSeconds: number;
  indexSize: string;
  tableSize: string;
  indexDefinition: string;
}

/** A key for the data and the schema: a change to either builds a new database. */
function cacheKey(): string {
  const migrations = join(ROOT, 'drizzle', 'migrations');
  const hash = createHash('sha256').update(JSON.stringify(DATA));
  for (const file of readdirSync(migrations)
    .filter((name) => name.endsWith('.sql'))
    .sort())
    hash.update(readFileSync(join(migrations, file)));
  hash.update(JSON.parse(readFileSync(join(ROOT, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')).version);
  return hash.digest('hex').slice(0, 16);
}

export async function openDatabase(data: Dataset, rebuild: boolean): Promise<{ dataDir: string; build: Build }> {
  const key = cacheKey();
  const folder = join(CACHE, key);
  const manifest = join(folder, 'build.json');
  if (!rebuild && existsSync(manifest)) {
    log(`reusing the database built in ${folder}`);
    return { dataDir: join(folder, 'pgdata'), build: JSON.parse(readFileSync(manifest, 'utf8')) as Build };
  }
  // Older builds are 1.3 GB each: keep only this one.
  rmSync(CACHE, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  const dataDir = join(folder, 'pgdata');
  const build = await buildDatabase(data, dataDir);
  writeFileSync(manifest, JSON.stringify(build, null, 2));
  return { dataDir, build };
}

/**
 * Migrations, projects and documents through the stand-in, as any database gets them; then the
 * tasks by binary COPY straight into PGlite, with the search index dropped during the load and
 * built again from its own definition afterwards (as one would on Neon), with more memory.
 */
async function buildDatabase(data: Dataset, dataDir: string): Promise<Build> {
  log('building the database: migrations, projects, documents...');
  const standIn = await startNeonStandIn({ dataDir });
  const projectIds: string[] = [];
  try {
    await migrateDatabase(standIn.connectionString);
    for (const [i] of DATA.projects.entries())
      projectIds.push((await createProject(standIn.connectionString, `Project ${i + 1}`)).projectId);
    const db = createDb(standIn.connectionString);
    const ids = data.documents.map((_, i) => documentId(i));
    const owners = data.documents.map((project) => projectIds[project]!);
    await db.execute(sql`insert into documents (id, project_id, title, content)
      select id, project_id, 'Plan ' || n, '' from unnest(${sql.param(ids)}::uuid[], ${sql.param(owners)}::uuid[]) with ordinality as d(id, project_id, n)`);
  } finally {
    await standIn.close();
  }

  const pg = await PGlite.create({ dataDir, extensions: { vector } });
  try {
    const { rows } = await pg.query<{ indexdef: string }>('select indexdef from pg_indexes where indexname = $1', [SEARCH_INDEX]);
    const indexDefinition = rows[0]!.indexdef;
    await pg.exec(`drop index ${SEARCH_INDEX}`);
    log(`loading ${thousands(data.tasks.length)} tasks...`);
    let started = performance.now();
    for (let from = 0; from < data.tasks.length; from += BUILD.copyRows) {
      const to = Math.min(data.tasks.length, from + BUILD.copyRows);
      await pg.query(
        `copy tasks (id, project_id, document_id, text, position, embedding, embedding_model, embedding_status) from '/dev/blob' with (format binary)`,
        [],
        { blob: new Blob([copyRows(data, projectIds, from, to)]) },
      );
    }
    const loadSeconds = (performance.now() - started) / 1000;
    log(`loaded in ${loadSeconds.toFixed(0)} s; building the index (${indexDefinition})...`);
    started = performance.now();
    await pg.exec(`set maintenance_work_mem = '${BUILD.maintenanceWorkMem}'; ${indexDefinition}; analyze`);
    const indexSeconds = (performance.now() - started) / 1000;
    const sizes = await pg.query<{ index: string; table: string }>(
      `select pg_size_pretty(pg_relation_size($1::regclass)) as index, pg_size_pretty(pg_table_size('tasks')) as table`,
      [SEARCH_INDEX],
    );
    log(`index built in ${indexSeconds.toFixed(0)} s`);
    return { projectIds, loadSeconds, indexSeconds, indexSize: sizes.rows[0]!.index, tableSize: sizes.rows[0]!.table, indexDefinition };
  } finally {
    await pg.close();
  }
}

/** Tasks [from, to) in Postgres' binary COPY format. */
function copyRows(data: Dataset, projectIds: string[], from: number, to: number): Uint8Array<ArrayBuffer> {
  const encoder = new TextEncoder();
  const parts: Uint8Array[] = [Uint8Array.from([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0])];
  const uuid = (id: string) => Uint8Array.from(id.replaceAll('-', '').match(/../g)!, (byte) => parseInt(byte, 16));
  for (let i = from; i < to; i++) {
    const task = data.tasks[i]!;
    const fields: (Uint8Array | null)[] = [
      uuid(taskId(i)),
      uuid(projectIds[task.project]!),
      uuid(documentId(task.document)),
      encoder.encode(`Task ${i}`),
      int32(task.position),
      task.status === 'pending' ? null : vectorBytes(data.vectors.subarray(i * DIMENSIONS, (i + 1) * DIMENSIONS)),
      task.model === null ? null : encoder.encode(task.model),
      encoder.encode(task.status),
    ];
    const row = new DataView(new ArrayBuffer(2));
    row.setInt16(0, fields.length);
    parts.push(new Uint8Array(row.buffer));
    for (const field of fields) {
      parts.push(int32(field === null ? -1 : field.length));
      if (field) parts.push(field);
    }
  }
  parts.push(Uint8Array.from([0xff, 0xff]));
  return concat(parts);
}

/** pgvector's binary form: dimensions (int16), unused (int16), float4 values, big-endian. */
function vectorBytes(values: Float32Array): Uint8Array {
  const view = new DataView(new ArrayBuffer(4 + values.length * 4));
  view.setInt16(0, values.length);
  for (let i = 0; i < values.length; i++) view.setFloat32(4 + i * 4, values[i]!);
  return new Uint8Array(view.buffer);
}

function int32(n: number): Uint8Array {
  const view = new DataView(new ArrayBuffer(4));
  view.setInt32(0, n);
  return new Uint8Array(view.buffer);
}

function concat(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** A line of the bench's progress, on standard error. */
export function log(message: string): void {
  console.error(`[search-at-scale bench] ${message}`);
}
