/**
 * Search at scale: semantic-search over 100,000 tasks shared by eight projects and two embedding
 * models, exact next to the HNSW index, against the Neon stand-in (PGlite + pgvector in WASM, this
 * process). Run with `npm run bench -- search-at-scale`, or `node bench/search-at-scale.ts [--rebuild]`.
 *
 * Data: clustered synthetic unit vectors (uniform random ones would put every pair at distance ≈ 1,
 * where recall means nothing): 24 themes of 8 topics each; a task is its topic plus Gaussian noise.
 * Each project uses half of the topics, drawn at random, so projects overlap: a query's nearest
 * vectors in the table are often another project's, and the project filter matters. The largest
 * project also holds tasks embedded by a previous model (same topics, filtered out by model), zero
 * vectors and pending tasks. Documents of all projects are interleaved in the table, as they arrive.
 *
 * Queries: per project, fresh points around its own topics (two thirds) and around topics it lacks.
 * Each query runs exact and through the index (the same statements semantic-search sends, the method
 * forced by the options), and once more with the options semantic-search uses. Recall@20: the results
 * against the exact top 20 computed here in JS from the generated vectors; "at the threshold": the
 * same with a threshold applied as the tool applies it (on the shown similarity), chosen so that
 * about half of the top 20 pass. Database time: the HTTP round trips of the call.
 *
 * The database (about 1.6 GB: vectors and index) is built once and kept in .bench-data/ (git-ignored),
 * keyed by the data's parameters and the migrations: the first run takes the load and the index build
 * (10–15 minutes in WASM on 2 busy cores), later runs open it in seconds; `--rebuild` forces a build.
 */
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import { EMBEDDING_DIMENSIONS, SEARCH_INDEX } from '../drizzle/schema.ts';
import { vectorLiteral } from '../shared/records/vectors.ts';
import { seededRandom } from '../local/random.ts';
import { findNearestTasks, NEAREST_TASKS_DEFAULTS, type NearestTasksOptions } from '../functions/task-analysis/lib/nearest-tasks.ts';
import { shownSimilarity } from '../functions/task-analysis/lib/similarity.ts';
import semanticSearch from '../functions/task-analysis/semantic-search.ts';
import { startNeonStandIn } from '../local/neon-http.ts';
import type { Outcome } from '../shared/core/contract.ts';
import type { ToolContext } from '../shared/core/tool.ts';
import { offlineDependencyDetector } from '../shared/providers/offline.ts';
import type { EmbeddingProvider } from '../shared/core/providers.ts';
import { createDb } from '../shared/runtime/db.ts';
import type { Database } from '../shared/core/database.ts';
import { linksFromEnv } from '../shared/runtime/link-templates.ts';
import { BENCH_ROUND_TRIPS, ms, percentile, thousands, timeDatabase, type DatabaseTimer } from './measure.ts';
import { around, BUILD, DATA, gaussians, generate, log, openDatabase, taskId, type Build, type Dataset } from './search-at-scale-data.ts';

const RUN = {
  queries: 30,
  warmup: 3,
  /** Share of queries around topics the project does not have. */
  offTopic: 1 / 3,
  limit: 20,
  efSearch: [100, 400, 1000],
  /** Projects (0-based) whose index search runs at each ef_search. */
  sweepProjects: [0, 2],
  /** pgvector's defaults: what a search without per-query settings ran with. */
  before: { efSearch: 40 },
  /** Ties at the 20th similarity, and float32 rounding in pgvector, within this count as hits. */
  tolerance: 1e-5,
} as const;

const DIMENSIONS = EMBEDDING_DIMENSIONS;
const EXACT: NearestTasksOptions = { indexMinTasks: 2 ** 31 - 1 };
const INDEX: NearestTasksOptions = { indexMinTasks: 0, indexMinShare: 0 };
// ---- queries and the exact reference -------------------------------------------------------------

interface Query {
  text: string;
  vector: Float32Array;
  /** The exact similarities of the project's searchable tasks, best first. */
  exact: { id: string; similarity: number }[];
}

/** Per project: its queries with their exact answers, computed from the generated vectors. */
function queriesOf(data: Dataset, project: number, random: () => number): Query[] {
  const gaussian = gaussians(random);
  const own = new Set(data.projectTopics[project]);
  const others = data.topics.map((_, i) => i).filter((i) => !own.has(i));
  const searchable = data.tasks.flatMap((task, i) =>
    task.project === project && task.model === DATA.model && task.status === 'completed' ? [i] : [],
  );
  const count = RUN.queries + RUN.warmup;
  return Array.from({ length: count }, (_, q) => {
    const topics = q % Math.round(1 / RUN.offTopic) === 0 ? others : [...own];
    const vector = around(data.topics[topics[Math.floor(random() * topics.length)]!]!, gaussian, new Float32Array(DIMENSIONS));
    const exact = searchable
      .map((i) => ({ id: taskId(i), similarity: dot(vector, data.vectors, i * DIMENSIONS) }))
      .filter((task) => task.similarity !== 0 || !isZero(data.vectors, task))
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, 50);
    return { text: `synthetic query ${project}-${q}`, vector, exact };
  });

  function isZero(vectors: Float32Array, task: { id: string }): boolean {
    const i = parseInt(task.id.slice(-12), 16);
    return vectors.subarray(i * DIMENSIONS, (i + 1) * DIMENSIONS).every((x) => x === 0);
  }
}

function dot(a: Float32Array, b: Float32Array, offset: number): number {
  let s = 0;
  for (let i = 0; i < DIMENSIONS; i++) s += a[i]! * b[offset + i]!;
  return s;
}

/**
 * Recall of `found` (ids with the similarity the database computed) against the exact top `limit`.
 * With a threshold: of the exact top `limit` that reach it, the share found and kept by it, both
 * judged as the tool judges (the shown similarity); 1 when none reaches it.
 */
function recallOf(query: Query, found: { task_id: string; similarity: number }[], threshold = 0): number {
  const exactById = new Map(query.exact.map((task) => [task.id, task.similarity]));
  const kth = query.exact[RUN.limit - 1]?.similarity ?? -Infinity;
  const inTop = (task: { task_id: string }) => (exactById.get(task.task_id) ?? -Infinity) >= kth - RUN.tolerance;
  if (threshold === 0) return found.filter(inTop).length / Math.min(RUN.limit, query.exact.length);
  const expected = query.exact.slice(0, RUN.limit).filter((task) => shownSimilarity(task.similarity) >= threshold + RUN.tolerance).length;
  const kept = found.filter((task) => shownSimilarity(task.similarity) >= threshold && inTop(task)).length;
  return expected === 0 ? 1 : Math.min(1, kept / expected);
}

// ---- runs ----------------------------------------------------------------------------------------

interface Series {
  databaseMs: number[];
  recall: number[];
  recallAtThreshold: number[];
  /** The method the search reported, and whether the plan read the HNSW index (after the warm-up). */
  method: string;
}

type Search = (query: Query) => Promise<{ tasks: { task_id: string; similarity: number }[]; method: string }>;

async function runSeries(endpoint: string, timer: DatabaseTimer, queries: Query[], threshold: number, search: Search): Promise<Series> {
  const series: Series = { databaseMs: [], recall: [], recallAtThreshold: [], method: '' };
  for (const [i, query] of queries.entries()) {
    timer.reset();
    const { tasks, method } = await search(query);
    if (i === RUN.warmup - 1)
      series.method = (await readsTheIndex(endpoint, timer)) ? `${method} (HNSW scan)` : `${method} (no index scan)`;
    if (i < RUN.warmup) continue;
    series.databaseMs.push(timer.elapsed());
    series.recall.push(recallOf(query, tasks));
    series.recallAtThreshold.push(recallOf(query, tasks, threshold));
  }
  return series;
}

/** The search of semantic-search, with its method forced by `options` (or chosen as the tool chooses). */
function nearest(db: Database, projectId: string, options?: NearestTasksOptions): Search {
  return async (query) => {
    const { tasks, method } = await findNearestTasks(db, { projectId, model: DATA.model, vector: query.vector, limit: RUN.limit }, options);
    return { tasks: tasks.filter((task) => Number.isFinite(task.similarity)), method };
  };
}

/** The index as pgvector answers without iterative scans, at its default ef_search (the planner held to the index). */
function withoutIterativeScan(db: Database, projectId: string): Search {
  return async (query) => {
    const target = sql`${vectorLiteral(query.vector)}::vector`;
    const [, result] = await db.batch([
      db.execute(sql`select set_config('hnsw.ef_search', ${String(RUN.before.efSearch)}, true), set_config('hnsw.iterative_scan', 'off', true),
        set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true)`),
      db.execute(sql`select t.id as task_id, 1 - (t.embedding <=> ${target}) as similarity from tasks t
        where t.project_id = ${projectId} and t.embedding_status = 'completed' and t.embedding_model = ${DATA.model}
        order by t.embedding <=> ${target} limit ${RUN.limit}`),
    ]);
    const rows = result.rows as { task_id: string; similarity: string }[];
    return { tasks: rows.map((row) => ({ task_id: row.task_id, similarity: Number(row.similarity) })), method: 'index' };
  };
}

/**
 * Whether the last search sent read the HNSW index: the same batch again (read from the request, so
 * it is the tool's own SQL) with its search statement under EXPLAIN ANALYZE, straight to the
 * endpoint, untimed. Only the branch that ran counts (the other is "never executed").
 */
async function readsTheIndex(endpoint: string, timer: DatabaseTimer): Promise<boolean> {
  const { queries } = JSON.parse(timer.lastRequest()) as { queries: { query: string; params: unknown[] }[] };
  const search = queries.findIndex((statement) => statement.query.includes('<=>'));
  const batch = queries
    .slice(0, search + 1)
    .map((statement, i) => (i === search ? { ...statement, query: `explain (analyze, costs off) ${statement.query}` } : statement));
  const response = await fetch(endpoint, { method: 'POST', body: JSON.stringify({ queries: batch }) });
  const { results } = (await response.json()) as { results: { rows: string[][] }[] };
  return results.at(-1)!.rows.some(([line]) => line!.includes(`Index Scan using ${SEARCH_INDEX}`) && !line!.includes('never executed'));
}

/** The threshold "in play": the median of the 10th best exact similarity over all queries. */
function thresholdInPlay(queries: Query[][]): number {
  const tenth = queries.flat().map((query) => query.exact[RUN.limit / 2 - 1]?.similarity ?? 0);
  return shownSimilarity(percentile(tenth, 0.5));
}

/** semantic-search itself answers as the default search did (within its answer budget): the bench measures what the tool runs. */
async function checkTool(db: Database, projectId: string, query: Query, threshold: number): Promise<void> {
  const embeddings: EmbeddingProvider = {
    id: DATA.model,
    dimensions: DIMENSIONS,
    defaultThreshold: threshold,
    embed: async () => [query.vector],
  };
  const context: ToolContext = {
    db,
    project: { id: projectId, name: 'bench' },
    providers: { embeddings, dependencies: offlineDependencyDetector },
    signal: new AbortController().signal,
    traceId: 'bench',
    idFor: async (purpose) => purpose,
    links: (linksFromEnv({}, 'http://127.0.0.1:8787') as { ok: true; links: ToolContext['links'] }).links,
    progress: () => {},
  };
  const input = semanticSearch.input.parse({ query: query.text, limit: RUN.limit });
  const outcome = (await semanticSearch.execute(input, context)) as Outcome<{ results: { task_id: string }[] }>;
  const answered = outcome.ok ? outcome.data.results.map((result) => result.task_id) : [];
  const searched = (await nearest(db, projectId)(query)).tasks
    .filter((task) => shownSimilarity(task.similarity) >= threshold)
    .map((task) => task.task_id);
  // The answer budget may keep fewer: the most similar first.
  const same = answered.join() === searched.slice(0, answered.length).join() && (answered.length > 0 || searched.length === 0);
  if (!same) throw new Error(`semantic-search answered otherwise than its search for ${query.text}`);
}

// ---- report --------------------------------------------------------------------------------------

export interface SearchAtScaleOptions {
  /** Build the database again even if a cached one matches. */
  rebuild?: boolean;
}

interface ProjectRow {
  project: number;
  searchable: number;
  all: number;
  share: number;
  exact: Series;
  index: Series;
  withoutIterativeScan: Series;
  chosen: Series;
}

/** Runs the benchmark and returns its report as a markdown section. */
export async function runSearchAtScaleBench(options: SearchAtScaleOptions = {}): Promise<string> {
  let started = performance.now();
  const data = generate();
  log(`generated ${thousands(data.tasks.length)} vectors in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  const { dataDir, build } = await openDatabase(data, options.rebuild ?? false);
  const random = seededRandom(DATA.seed + 1);
  started = performance.now();
  const queries = DATA.projects.map((_, project) => queriesOf(data, project, random));
  log(`exact answers in JS in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  const threshold = thresholdInPlay(queries);

  const standIn = await startNeonStandIn({ dataDir, roundTrip: BENCH_ROUND_TRIPS.neon });
  const timer = timeDatabase();
  try {
    const db = createDb(standIn.connectionString);
    const { rows: catalog } = await db.execute(
      sql`select reltuples::int as indexed from pg_class where oid = to_regclass(${SEARCH_INDEX})`,
    );
    const { indexed } = catalog[0] as { indexed: number };
    const rows: ProjectRow[] = [];
    const sweeps: string[] = [];
    for (const [project, projectId] of build.projectIds.entries()) {
      const inProject = data.tasks.filter((task) => task.project === project);
      const searchable = inProject.filter((task) => task.model === DATA.model && task.status === 'completed').length;
      log(`project ${project + 1}: ${thousands(searchable)} searchable tasks...`);
      const run = (search: Search) => runSeries(standIn.url, timer, queries[project]!, threshold, search);
      rows.push({
        project: project + 1,
        searchable,
        all: inProject.length,
        share: searchable / indexed,
        exact: await run(nearest(db, projectId, EXACT)),
        index: await run(nearest(db, projectId, INDEX)),
        withoutIterativeScan: await run(withoutIterativeScan(db, projectId)),
        chosen: await run(nearest(db, projectId)),
      });
      await checkTool(db, projectId, queries[project]![RUN.warmup]!, threshold);
      if ((RUN.sweepProjects as readonly number[]).includes(project)) {
        for (const efSearch of RUN.efSearch) {
          const sweep = await run(nearest(db, projectId, { ...INDEX, efSearch }));
          sweeps.push(`| ${project + 1} (${thousands(searchable)}) | ${efSearch} | ${times(sweep)} | ${recalls(sweep)} |`);
        }
      }
    }
    return report({ build, threshold, indexed, rows, sweeps, total: data.tasks.length });
  } finally {
    timer.restore();
    await standIn.close();
  }
}

function times(series: Series): string {
  return `${ms(percentile(series.databaseMs, 0.5))} / ${ms(percentile(series.databaseMs, 0.95))}`;
}

function meanAndMin(values: number[]): string {
  return `${(values.reduce((a, b) => a + b, 0) / values.length).toFixed(3)} (${Math.min(...values).toFixed(2)})`;
}

function recalls(series: Series): string {
  return `${meanAndMin(series.recall)} | ${meanAndMin(series.recallAtThreshold)}`;
}

interface Report {
  build: Build;
  threshold: number;
  indexed: number;
  rows: ProjectRow[];
  sweeps: string[];
  total: number;
}

function report(r: Report): string {
  const { indexMinTasks, indexMinShare, efSearch } = NEAREST_TASKS_DEFAULTS;
  const line = (row: ProjectRow) =>
    `| ${row.project} | ${thousands(row.searchable)} of ${thousands(row.all)} | ${(100 * row.share).toFixed(1)} % | ${times(row.exact)} | ` +
    `${times(row.index)} | ${recalls(row.index)} | ${meanAndMin(row.withoutIterativeScan.recall)} | ${row.chosen.method} |`;
  const indexed = r.rows.filter((row) => row.chosen.method.startsWith('index'));
  const recall = indexed.flatMap((row) => row.chosen.recall);
  const mean = recall.reduce((a, b) => a + b, 0) / recall.length;
  const verdict = indexed.length
    ? `Where semantic-search uses the index (projects ${indexed.map((row) => row.project).join(', ')}): recall@${RUN.limit} ${mean.toFixed(3)} over ` +
      `${recall.length} queries, the lowest ${Math.min(...recall).toFixed(2)}; target >= 0.98 and no query below 0.9: ` +
      `**${mean >= 0.98 && Math.min(...recall) >= 0.9 ? 'met' : 'missed'}**. Its database p95 there: ` +
      `${indexed.map((row) => `${ms(percentile(row.chosen.databaseMs, 0.95))} (exact: ${ms(percentile(row.exact.databaseMs, 0.95))})`).join(', ')}.`
    : 'semantic-search used the index for no project.';
  return [
    '## Search at scale: exact and HNSW over 100,000 tasks (bench/search-at-scale.ts)',
    '',
    `${thousands(r.total)} tasks in one table (the index holds about ${thousands(r.indexed)}), ${DATA.projects.length} projects sharing clustered ` +
      `synthetic vectors (${DATA.themes * DATA.topicsPerTheme} topics; each project uses half of them), ${thousands(DATA.previousModelTasks)} tasks of project 1 ` +
      `embedded by a previous model; ${RUN.queries} queries per project (after ${RUN.warmup} to warm up), a third of them about topics the project lacks; ` +
      `limit ${RUN.limit}. Database time p50 / p95 of semantic-search's own statements, the method forced (exact, index) or as the tool chooses it ` +
      `(default: the index from ${thousands(indexMinTasks)} searchable tasks and ${100 * indexMinShare} % of the index, ef_search ${efSearch}, iterative scan). ` +
      `Recall@${RUN.limit}: mean (lowest) against the exact top ${RUN.limit} computed in JS; "at threshold": the same with threshold ${r.threshold} ` +
      `applied as the tool applies it (about half the top ${RUN.limit} reach it). Without iterative scan: the index alone, ef_search ${RUN.before.efSearch} (pgvector's defaults).`,
    '',
    `| project | searchable of all tasks | share of the index | exact p50 / p95 | index p50 / p95 | index recall@${RUN.limit} | at threshold | without iterative scan | default |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---|',
    ...r.rows.map(line),
    '',
    verdict,
    '',
    '`hnsw.ef_search`, index method:',
    '',
    `| project | ef_search | p50 / p95 | recall@${RUN.limit} | at threshold |`,
    '|---|---:|---:|---:|---:|',
    ...r.sweeps,
    '',
    `Index: \`${r.build.indexDefinition}\`, built in ${r.build.indexSeconds.toFixed(0)} s with maintenance_work_mem = ${BUILD.maintenanceWorkMem} ` +
      `(${r.build.indexSize}; table ${r.build.tableSize}; the load by binary COPY took ${r.build.loadSeconds.toFixed(0)} s), kept in .bench-data/ for later runs. ` +
      "PGlite's pgvector is WASM without SIMD in one thread: these figures rank methods and sizes; they are not Neon's.",
  ].join('\n');
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { rebuild: { type: 'boolean' } } });
  console.log(await runSearchAtScaleBench({ rebuild: values.rebuild ?? false }));
}
