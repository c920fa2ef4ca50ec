/**
 * Task-analysis benchmark: the database time of semantic-search, get-document-context and
 * query-task-graph, measured by calling each tool's real `execute` (the same SQL, through the real
 * drizzle/neon-http client) against a fresh in-memory Neon stand-in (PGlite + pgvector in WASM, in
 * this process). Run with `node bench/task-analysis.ts`; `runTaskAnalysisBench()` returns the report
 * as a markdown section for bench/RESULTS.md. Search over 100,000 tasks, exact and through the HNSW
 * index, is bench/search-at-scale.ts.
 *
 * Data: the synthetic corpus (local/corpus.ts), stored by the seed's own path (storeDocument, then
 * embedTasks with the offline hashing embedder): real task wording, clustered by theme, not uniform
 * random vectors (on which every distance is about 1 and recall means nothing). One project grows
 * from 1k to 10k tasks; queries are task wordings of another seed.
 *
 * - semantic-search at 1k and 10k tasks (exact at these sizes). Recall@20 of every call is checked
 *   against an exact top 20 computed in JS (bench/exact-reference.ts; ties at the 20th similarity
 *   count as hits).
 * - get-document-context: a 150,000-character document, every chunk.
 * - query-task-graph: depth 3 from tasks with relationships, over about 10k relationships found by
 *   detect-dependencies on overlapping 50-task windows of the 10k tasks.
 *
 * Database time: the sum of the HTTP round trips to the stand-in during one call (timed inside the
 * database client's fetch), i.e. what Neon's endpoint would add; end to end: the whole `execute`, query
 * embedding and result shaping included. Both in the same process as PGlite, on the same cores.
 */
import { sql } from 'drizzle-orm';
import { storeDocument } from '../functions/documents/lib/ingest.ts';
import detectDependenciesTool from '../functions/task-analysis/detect-dependencies.ts';
import getDocumentContext from '../functions/task-analysis/get-document-context.ts';
import { CHUNK_DEFAULTS, chunkLayout } from '../shared/records/chunks.ts';
import { extractTasks } from '../functions/documents/lib/task-extraction.ts';
import queryTaskGraph from '../functions/task-analysis/query-task-graph.ts';
import semanticSearch from '../functions/task-analysis/semantic-search.ts';
import { CORPUS_THEMES, generateCorpus } from '../local/corpus.ts';
import { createProject, migrateDatabase } from '../local/database.ts';
import { startNeonStandIn } from '../local/neon-http.ts';
import { NO_ROUND_TRIP } from '../local/round-trip.ts';
import { seededRandom } from '../local/random.ts';
import { seedCorpus } from '../local/seed.ts';
import type { Outcome } from '../shared/core/contract.ts';
import { createDb } from '../shared/runtime/db.ts';
import type { Database } from '../shared/core/database.ts';
import { nameBasedUuid } from '../shared/runtime/ids.ts';
import { linksFromEnv } from '../shared/runtime/link-templates.ts';
import { offlineDependencyDetector, offlineEmbeddings } from '../shared/providers/offline.ts';
import type { AnyTool, ToolContext } from '../shared/core/tool.ts';
import { exactReference, recallAt, type Recall, type Reference } from './exact-reference.ts';
import { injectRoundTrips, ms, percentile, thousands, timeDatabase, type DatabaseTimer } from './measure.ts';

const BENCH = {
  exactSizes: [1_000, 10_000],
  /** Average tasks per document while a project grows. */
  tasksPerDocument: 200,
  search: { calls: 40, warmup: 5 },
  limit: 20,
  warmup: 5,
  /** Ties at the 20th similarity, and float32 rounding in pgvector, within this count as hits. */
  recallTolerance: 1e-5,
  documentCharacters: 150_000,
  documentCalls: 20,
  relationships: 10_000,
  graphWindow: { size: 50, stride: 25 },
  graphDepth: 3,
  graphStarts: 40,
} as const;

interface Sample {
  databaseMs: number;
  totalMs: number;
}

interface Row {
  label: string;
  samples: Sample[];
  /** Extra columns, already formatted. */
  notes: string;
  /** A remark printed under the table. */
  footnote?: string;
}

/** Runs the benchmark and returns its report as a markdown section. */
export async function runTaskAnalysisBench(): Promise<string> {
  const standIn = await startNeonStandIn();
  const timer = timeDatabase();
  try {
    const url = standIn.connectionString;
    await migrateDatabase(url);
    const db = createDb(url);
    const queries = queryTexts();
    const search: Row[] = [];

    const main = await benchProject(url, timer, 'Task-analysis bench');
    for (const size of BENCH.exactSizes) {
      // Loaded at the stand-in's own speed, measured at the injected round trips (if any).
      standIn.roundTrip.set(NO_ROUND_TRIP);
      await main.grow(size);
      injectRoundTrips({ neon: standIn });
      const reference = await exactReference(db, main.id);
      search.push(await searchRow(`${thousands(size)} tasks`, main.call, reference, queries, BENCH.search));
    }
    log('detecting relationships for query-task-graph...');
    const graph = await graphBench(db, main.id, main.call);
    log('get-document-context on a long document...');
    const documentRows = await documentBench(db, main.id, main.call);
    return report({ search, documentRows, graph });
  } finally {
    timer.restore();
    await standIn.close();
  }
}

interface BenchProject {
  id: string;
  call: Call;
  /** Seeds the corpus until the project holds `tasks` tasks. */
  grow(tasks: number): Promise<void>;
}

async function benchProject(url: string, timer: DatabaseTimer, name: string): Promise<BenchProject> {
  const { projectId } = await createProject(url, name);
  const context: ToolContext = {
    db: createDb(url),
    project: { id: projectId, name },
    providers: { embeddings: offlineEmbeddings, dependencies: offlineDependencyDetector },
    signal: new AbortController().signal,
    traceId: 'bench',
    idFor: (purpose) => nameBasedUuid(`bench:${purpose}:${crypto.randomUUID()}`),
    links: (linksFromEnv({}, 'http://127.0.0.1:8787') as { ok: true; links: ToolContext['links'] }).links,
    progress: () => {},
  };
  let loaded = 0;
  return {
    id: projectId,
    call: timedCall(timer, context),
    async grow(tasks) {
      const added = tasks - loaded;
      if (added <= 0) return;
      // Each stage its own seed, so the project holds no copies of earlier documents.
      const seeded = await seedCorpus(url, projectId, { documents: Math.ceil(added / BENCH.tasksPerDocument), tasks: added, seed: tasks });
      loaded = tasks;
      log(`${name}: ${thousands(tasks)} tasks loaded (${Math.round(added / (seeded.elapsedMs / 1000))} tasks/s)`);
    },
  };
}

type Call = <T>(tool: AnyTool, input: Record<string, unknown>) => Promise<{ data: T; sample: Sample }>;

/** Runs a tool's execute on validated input (validation outside the timing); a failure throws. */
function timedCall(timer: DatabaseTimer, context: ToolContext): Call {
  return async <T>(tool: AnyTool, raw: Record<string, unknown>) => {
    const input = tool.input.parse(raw);
    timer.reset();
    const started = performance.now();
    const outcome = (await tool.execute(input, context)) as Outcome<T>;
    const sample = { databaseMs: timer.elapsed(), totalMs: performance.now() - started };
    if (!outcome.ok) throw new Error(`${tool.id} failed: ${outcome.error.message}`);
    return { data: outcome.data, sample };
  };
}

// ---- semantic-search ----------------------------------------------------------------------------

async function searchRow(
  label: string,
  call: Call,
  reference: Reference,
  queries: string[],
  { calls, warmup }: { calls: number; warmup: number },
): Promise<Row> {
  log(`semantic-search: ${label}...`);
  const samples: Sample[] = [];
  const recalls: (Recall & { query: string })[] = [];
  const run = (query: string) => call<{ results: { task_id: string }[] }>(semanticSearch, { query, limit: BENCH.limit, threshold: 0 });
  for (const query of queries.slice(-warmup)) await run(query);
  for (const query of queries.slice(0, calls)) {
    const { data, sample } = await run(query);
    samples.push(sample);
    const [vector] = await offlineEmbeddings.embed([query]);
    recalls.push({
      query,
      ...recallAt(
        BENCH.limit,
        vector!,
        data.results.map((r) => r.task_id),
        reference,
        BENCH.recallTolerance,
      ),
    });
  }
  const mean = recalls.reduce((sum, r) => sum + r.recall, 0) / recalls.length;
  const worst = recalls.reduce((a, b) => (b.recall < a.recall ? b : a));
  const row: Row = { label, samples, notes: `${mean.toFixed(3)} (min ${worst.recall.toFixed(2)})` };
  if (worst.recall < 0.5) {
    row.footnote =
      `${label}: the worst query, “${worst.query}”, found ${Math.round(worst.recall * BENCH.limit)} of its exact top ${BENCH.limit} ` +
      `(best similarity found ${worst.bestFound.toFixed(3)}; exact ${BENCH.limit}th best ${worst.kth.toFixed(3)}).`;
  }
  return row;
}

/** Natural task wordings from another seed, without their notes: what an agent would ask for. */
function queryTexts(): string[] {
  return generateCorpus({ documents: 12, tasks: BENCH.search.calls + BENCH.search.warmup, seed: 1_000 })
    .flatMap((document) => extractTasks(document.content))
    .map((task) => task.text.replace(/ (?:once we|after we|\().*$/, ''));
}

// ---- get-document-context -----------------------------------------------------------------------

async function documentBench(db: Database, projectId: string, call: Call): Promise<Row[]> {
  const document = longDocument(BENCH.documentCharacters);
  const { tasks } = await storeDocument(db, projectId, document);
  const taskId = tasks[0]!.id;
  const chunks = chunkLayout(BENCH.documentCharacters).totalChunks;
  const rows: Row[] = [];
  for (let chunk = 1; chunk <= chunks; chunk++) {
    const input = { task_ids: [taskId], chunk_number: chunk };
    await call(getDocumentContext, input);
    const samples: Sample[] = [];
    let bytes = 0;
    for (let i = 0; i < BENCH.documentCalls; i++) {
      const { data, sample } = await call<{ documents: unknown[] }>(getDocumentContext, input);
      samples.push(sample);
      bytes = JSON.stringify(data).length;
    }
    rows.push({ label: `chunk ${chunk} of ${chunks}`, samples, notes: `${thousands(tasks.length)} | ${(bytes / 1000).toFixed(0)} kB` });
  }
  return rows;
}

/** A plan of exactly `characters` characters (the corpus, grown until long enough, then cut). */
function longDocument(characters: number): { title: string; content: string } {
  for (let tasks = 100; ; tasks = Math.ceil(tasks * 1.2)) {
    const [document] = generateCorpus({ documents: 1, tasks, seed: 7 });
    if (document!.content.length >= characters) return { title: document!.title, content: document!.content.slice(0, characters) };
  }
}

// ---- query-task-graph ---------------------------------------------------------------------------

/**
 * Saves relationships with detect-dependencies over overlapping windows of each document's tasks
 * until there are BENCH.relationships, then walks the graph from tasks that have some.
 */
async function graphBench(db: Database, projectId: string, call: Call): Promise<{ row: Row; note: string }> {
  const { rows: taskRows } = await db.execute(
    sql`select id, document_id from tasks where project_id = ${projectId} order by document_id, position`,
  );
  const byDocument = Map.groupBy(taskRows as { id: string; document_id: string }[], (row) => row.document_id);
  const { size, stride } = BENCH.graphWindow;
  let relationships = 0;
  let windows = 0;
  const detection: Sample[] = [];
  detect: for (const tasks of byDocument.values()) {
    for (let start = 0; start + 1 < tasks.length; start += stride) {
      const { sample } = await call(detectDependenciesTool, { task_ids: tasks.slice(start, start + size).map((task) => task.id) });
      detection.push(sample);
      windows++;
      const { rows: count } = await db.execute(sql`select count(*)::int as n from task_relationships where project_id = ${projectId}`);
      relationships = (count[0] as { n: number }).n;
      if (relationships >= BENCH.relationships) break detect;
      if (start + size >= tasks.length) break;
    }
  }
  const { rows: typeRows } = await db.execute(
    sql`select type, count(*)::int as n from task_relationships where project_id = ${projectId} group by type order by type`,
  );
  const { rows: startRows } = await db.execute(
    sql`select distinct source_task_id as id from task_relationships where project_id = ${projectId} order by id`,
  );
  const random = seededRandom(1);
  const starts = Array.from({ length: BENCH.graphStarts }, () => (startRows[Math.floor(random() * startRows.length)] as { id: string }).id);

  log(`query-task-graph over ${thousands(relationships)} relationships...`);
  const walk = (taskId: string) =>
    call<{ tasks: unknown[]; relationships: unknown[] }>(queryTaskGraph, { task_id: taskId, depth: BENCH.graphDepth });
  for (const start of starts.slice(0, BENCH.warmup)) await walk(start);
  const samples: Sample[] = [];
  const reached: number[] = [];
  for (const start of starts) {
    const { data, sample } = await walk(start);
    samples.push(sample);
    reached.push(data.tasks.length);
  }
  const row = {
    label: `${thousands(relationships)} relationships`,
    samples,
    notes: `median ${percentile(reached, 0.5)} tasks (max ${Math.max(...reached)})`,
  };
  const types = (typeRows as { type: string; n: number }[]).map((r) => `${thousands(r.n)} ${r.type}`).join(', ');
  const note =
    `The graph: ${thousands(relationships)} relationships (${types}) saved by detect-dependencies (offline heuristic) on ${windows} ` +
    `windows of ${size} tasks overlapping by ${size - stride}, in document order; each detection call took ` +
    `${ms(
      percentile(
        detection.map((s) => s.totalMs),
        0.5,
      ),
    )} (database ${ms(
      percentile(
        detection.map((s) => s.databaseMs),
        0.5,
      ),
    )}) at the median.`;
  return { row, note };
}

// ---- report -------------------------------------------------------------------------------------

interface Results {
  search: Row[];
  documentRows: Row[];
  graph: { row: Row; note: string };
}

function report(r: Results): string {
  const figures = (row: Row) => {
    const database = row.samples.map((s) => s.databaseMs);
    const total = row.samples.map((s) => s.totalMs);
    return `${ms(percentile(database, 0.5))} | ${ms(percentile(database, 0.95))} | ${ms(percentile(total, 0.5))} | ${ms(percentile(total, 0.95))}`;
  };
  const line = (row: Row) => `| ${row.label} | ${row.samples.length} | ${figures(row)} | ${row.notes} |`;
  const exact10k = r.search.find((row) => row.label === '10,000 tasks');
  const p95At10k = exact10k
    ? ms(
        percentile(
          exact10k.samples.map((s) => s.databaseMs),
          0.95,
        ),
      )
    : 'n/a';
  return [
    '## Task analysis: database time of the tools (in-memory Neon stand-in: PGlite + pgvector in WASM)',
    '',
    "Each tool's real `execute` through drizzle/neon-http against the stand-in, which runs in the same process (single-threaded WASM). " +
      `Data: the synthetic corpus (\`local/corpus.ts\`: project plans on ${CORPUS_THEMES.length} themes, task wording clustered by theme), stored the way \`npm run seed\` ` +
      'stores it (storeDocument + embedTasks, offline hashing embeddings, 1536-d), one project growing from 1k tasks, tables analyzed after each load. ' +
      'Database: the HTTP round trips to the stand-in during the call. Total: the whole execute (query embedding, result shaping). ' +
      'p50/p95 over the calls after a warm-up.',
    '',
    `### semantic-search (limit ${BENCH.limit}, threshold 0)`,
    '',
    `Queries: task wordings from another seed of the corpus. Recall@${BENCH.limit}: each call's results against the exact top ${BENCH.limit} ` +
      `computed in JS from the same embeddings (a result whose exact similarity reaches the ${BENCH.limit}th best is a hit, within ` +
      `${BENCH.recallTolerance} for ties and float32 rounding). Both sizes are below the size from which semantic-search uses the HNSW index: ` +
      'every task is scored (100,000 tasks, exact and through the index: the search-at-scale section).',
    '',
    '| data | calls | database p50 | database p95 | total p50 | total p95 | recall@20 mean (min) |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...r.search.map(line),
    ...r.search.flatMap((row) => (row.footnote ? ['', row.footnote] : [])),
    '',
    `Project target: exact search over <= 10k tasks, p95 <= 50 ms database time. Here ${p95At10k} at 10k: ` +
      "PGlite's pgvector is WASM without SIMD in one thread, so these figures rank sizes; they are not Neon's.",
    '',
    `### get-document-context (one ${thousands(BENCH.documentCharacters)}-character document, ${thousands(CHUNK_DEFAULTS.chunkSize)}-character chunks)`,
    '',
    '| chunk | calls | database p50 | database p95 | total p50 | total p95 | tasks in the document | response |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...r.documentRows.map(line),
    '',
    `### query-task-graph (depth ${BENCH.graphDepth}, both directions, all types, limit 100)`,
    '',
    '| graph | calls | database p50 | database p95 | total p50 | total p95 | tasks reached |',
    '|---|---:|---:|---:|---:|---:|---|',
    line(r.graph.row),
    '',
    r.graph.note,
  ].join('\n');
}

// ---- helpers ------------------------------------------------------------------------------------

function log(message: string): void {
  console.error(`[task-analysis bench] ${message}`);
}

if (import.meta.main) console.log(await runTaskAnalysisBench());
