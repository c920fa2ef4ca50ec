/**
 * semantic-search's nearest-task search (functions/task-analysis/lib/nearest-tasks.ts) in workerd,
 * on the Neon stand-in with the migrations' HNSW index: the method chosen (exact or the index), the
 * index path not starved by the project and model filters, the exact path exact whatever the planner
 * would prefer, and settings that end with the transaction.
 *
 * Data: seeded random directions in a 16-dimensional subspace (so that distances vary and the HNSW
 * graph is well connected), one small project among a crowd of another project's tasks and of tasks
 * embedded by another model, which a plain index scan would mostly return instead. The judge is an
 * exact ranking computed here from the stored vectors, never the search itself.
 */
import { sql, type SQL } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { documents, projects } from '../../drizzle/schema.ts';
import { vectorLiteral } from '../../shared/records/vectors.ts';
import { parseVector } from '../support/vectors.ts';
import { seededRandom } from '../../local/random.ts';
import {
  findNearestTasks,
  nearestTasksStatements,
  readNearestTasks,
  type NearestTasksOptions,
  type NearestTasksQuery,
} from '../../functions/task-analysis/lib/nearest-tasks.ts';
import { db } from './helpers.ts';

const DIMENSIONS = 1536;
const SUBSPACE = 16;
const MODEL = 'test-model-v2';
const OTHER_MODEL = 'test-model-v1';
const INDEX: NearestTasksOptions = { indexMinTasks: 0, indexMinShare: 0 };
const EXACT: NearestTasksOptions = { indexMinTasks: 2 ** 31 - 1 };

const random = seededRandom(7);
function randomUnit(): Float32Array {
  const v = new Float32Array(DIMENSIONS);
  for (let i = 0; i < SUBSPACE; i++) v[i] = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const norm = Math.hypot(...v.subarray(0, SUBSPACE));
  return v.map((x) => x / norm);
}

interface Owner {
  projectId: string;
  documentIds: string[];
}

async function project(name: string, documentCount = 1): Promise<Owner> {
  const [row] = await db.insert(projects).values({ name }).returning({ id: projects.id });
  const inserted = await db
    .insert(documents)
    .values(Array.from({ length: documentCount }, (_, i) => ({ projectId: row!.id, title: `${name} plan ${i + 1}`, content: '' })))
    .returning({ id: documents.id });
  return { projectId: row!.id, documentIds: inserted.map((document) => document.id) };
}

async function addTasks(projectId: string, documentId: string, vectors: Float32Array[], model = MODEL): Promise<void> {
  const rows = JSON.stringify(vectors.map((vector, i) => ({ text: `Task ${i}`, position: i, embedding: vectorLiteral(vector) })));
  await db.execute(sql`insert into tasks (project_id, document_id, text, position, embedding, embedding_model, embedding_status)
    select ${projectId}::uuid, ${documentId}::uuid, r.text, r.position, r.embedding::vector, ${model}, 'completed'
    from jsonb_to_recordset(${rows}::jsonb) as r(text text, position int, embedding text)`);
}

/** The exact ranking of the project's searchable tasks (of `documentId` only, if given), from the stored vectors. */
async function exactTop(query: Float32Array, projectId: string, limit: number, documentId?: string): Promise<string[]> {
  const { rows } = await db.execute(sql`select id, embedding::text as embedding from tasks
    where project_id = ${projectId} and embedding_status = 'completed' and embedding_model = ${MODEL}
      ${documentId ? sql`and document_id = ${documentId}` : sql``}`);
  return (rows as { id: string; embedding: string }[])
    .map((row) => ({ id: row.id, vector: parseVector(row.embedding) }))
    .filter((row) => row.vector.some((x) => x !== 0))
    .map((row) => ({ id: row.id, similarity: row.vector.reduce((sum, x, i) => sum + x * query[i]!, 0) }))
    .sort((a, b) => b.similarity - a.similarity)
    .slice(0, limit)
    .map((row) => row.id);
}

/** Settings that push the planner towards the HNSW index: no scan of the whole table, no sort. */
const towardsTheIndex = sql`select set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true)`;

/**
 * The search's own statements in one transaction, after `prefix` if given, and the scans its search
 * statement ran (EXPLAIN ANALYZE of the same statements, in a second transaction).
 */
async function search(query: NearestTasksQuery, options: NearestTasksOptions, prefix?: SQL) {
  const [settings, scope, statement, known] = nearestTasksStatements(query, options);
  const before = prefix ? [db.execute(prefix)] : [];
  const results = await db.batch([db.execute(settings), ...before, db.execute(scope), db.execute(statement), db.execute(known)]);
  const explained = await db.batch([
    db.execute(settings),
    ...before,
    db.execute(scope),
    db.execute(sql`explain (analyze, costs off) ${statement}`),
  ]);
  const scans = (explained.at(-1)!.rows as { 'QUERY PLAN': string }[])
    .map((row) => row['QUERY PLAN'].trim())
    .filter((line) => / Scan /.test(line) && !line.includes('never executed'));
  const [, scopeResult, searchResult, knownResult] = results.slice(before.length);
  return { ...readNearestTasks([results[0], scopeResult!, searchResult!, knownResult!]), scans };
}

/** A plain HNSW scan, as pgvector answers without iterative scans (ef_search 40). */
async function plainIndexScan(query: Float32Array, projectId: string): Promise<string[]> {
  const target = sql`${vectorLiteral(query)}::vector`;
  const [, , result] = await db.batch([
    db.execute(towardsTheIndex),
    db.execute(sql`select set_config('hnsw.ef_search', '40', true), set_config('hnsw.iterative_scan', 'off', true)`),
    db.execute(sql`select id from tasks where project_id = ${projectId} and embedding_status = 'completed' and embedding_model = ${MODEL}
      order by embedding <=> ${target} limit 20`),
  ]);
  return (result.rows as { id: string }[]).map((row) => row.id);
}

let small: Owner;
const queries = Array.from({ length: 5 }, randomUnit);

beforeAll(async () => {
  const crowd = await project('Nearest crowd');
  small = await project('Nearest small', 2);
  // The small project: 60 tasks in two documents, a zero vector (never scored), and 60 tasks of
  // another model; around them 300 tasks of another project. (Each insert also goes into the HNSW
  // graph, in WASM: this takes seconds.)
  await addTasks(crowd.projectId, crowd.documentIds[0]!, Array.from({ length: 300 }, randomUnit));
  await addTasks(small.projectId, small.documentIds[0]!, Array.from({ length: 30 }, randomUnit));
  await addTasks(small.projectId, small.documentIds[1]!, [...Array.from({ length: 30 }, randomUnit), new Float32Array(DIMENSIONS)]);
  await addTasks(small.projectId, small.documentIds[0]!, Array.from({ length: 60 }, randomUnit), OTHER_MODEL);
}, 120_000);

describe('nearest tasks through the HNSW index', () => {
  it('finds the top 20 of a small project among many closer tasks of others, where a plain index scan starves', async () => {
    // The index method holds the planner to the index even here, where it would rather sort the
    // small project's few rows.
    for (const vector of queries) {
      const query: NearestTasksQuery = { projectId: small.projectId, model: MODEL, vector, limit: 20 };
      const expected = await exactTop(vector, small.projectId, 20);
      // The scenario: without iterative scans the index yields the crowd, and the filters leave few.
      expect((await plainIndexScan(vector, small.projectId)).length).toBeLessThan(20);

      const found = await search(query, INDEX);
      expect(found.method).toBe('index');
      expect(found.scans.join('\n')).toContain('Index Scan using tasks_embedding_hnsw_idx on tasks');
      const ids = found.tasks.map((task) => task.task_id);
      expect(ids).toHaveLength(20);
      // Approximate, but on a graph this small and well connected it misses at most one.
      expect(ids.filter((id) => expected.includes(id)).length).toBeGreaterThanOrEqual(19);
      // Nearest first, each with its own similarity.
      const similarities = found.tasks.map((task) => task.similarity);
      expect(similarities).toEqual([...similarities].sort((a, b) => b - a));
    }
  });

  it('stays exact below the size, even where the planner is pushed towards the index', async () => {
    for (const vector of queries) {
      const query: NearestTasksQuery = { projectId: small.projectId, model: MODEL, vector, limit: 20 };
      const found = await search(query, EXACT, towardsTheIndex);
      expect(found.method).toBe('exact');
      expect(found.scans.join('\n')).not.toContain('tasks_embedding_hnsw_idx');
      expect(found.tasks.map((task) => task.task_id)).toEqual(await exactTop(vector, small.projectId, 20));
    }
  });
});

describe('nearest tasks: which method', () => {
  const vector = queries[0]!;
  let query: NearestTasksQuery;
  beforeAll(() => void (query = { projectId: small.projectId, model: MODEL, vector, limit: 20 }));

  // Searchable: embedded by the configured model, the zero vector included (it is counted, never scored).
  it('uses the index from indexMinTasks tasks of the configured model in scope, counting only those', async () => {
    const at = await findNearestTasks(db, query, { indexMinTasks: 61, indexMinShare: 0 });
    expect(at).toMatchObject({ method: 'index', searchable: 61, total: 121 });
    const below = await findNearestTasks(db, query, { indexMinTasks: 62, indexMinShare: 0 });
    expect(below).toMatchObject({ method: 'exact', searchable: 61, total: 121 });
    expect(below.tasks.map((task) => task.task_id)).toEqual(await exactTop(vector, small.projectId, 20));

    // The documents asked for are the scope: 30 searchable tasks in one document (and the other
    // model's 60), 31 in the other (the zero vector).
    const [first, second] = small.documentIds;
    const inFirst = await findNearestTasks(db, { ...query, documentIds: [first!] }, { indexMinTasks: 31, indexMinShare: 0 });
    expect(inFirst).toMatchObject({ method: 'exact', searchable: 30, total: 90, knownDocumentIds: [first] });
    expect(inFirst.tasks.map((task) => task.task_id)).toEqual(await exactTop(vector, small.projectId, 20, first));
    const inSecond = await findNearestTasks(db, { ...query, documentIds: [second!] }, { indexMinTasks: 31, indexMinShare: 0 });
    expect(inSecond).toMatchObject({ method: 'index', searchable: 31, total: 31 });
  });

  it('uses the index only when the scope is a large enough share of the indexed vectors', async () => {
    // The catalog's estimate of the index's rows is known once the table has been analysed.
    await db.execute(sql`analyze tasks`);
    const { rows } = await db.execute(sql`select reltuples from pg_class where relname = 'tasks_embedding_hnsw_idx'`);
    const indexed = Number((rows[0] as { reltuples: number }).reltuples);
    expect(indexed).toBeGreaterThan(400);
    expect(await findNearestTasks(db, query, { indexMinTasks: 0, indexMinShare: 61 / indexed - 0.001 })).toMatchObject({ method: 'index' });
    expect(await findNearestTasks(db, query, { indexMinTasks: 0, indexMinShare: 61 / indexed + 0.001 })).toMatchObject({ method: 'exact' });
  });

  it('sets its settings for its own transaction only', async () => {
    await findNearestTasks(db, query, INDEX);
    const { rows } =
      await db.execute(sql`select current_setting('hnsw.iterative_scan') as iterative, current_setting('hnsw.ef_search') as ef,
      current_setting('enable_seqscan') as seqscan, current_setting('enable_bitmapscan') as bitmapscan, current_setting('enable_sort') as sort,
      coalesce(current_setting('edge_tools.search_method', true), '') as method`);
    expect(rows[0]).toEqual({ iterative: 'off', ef: '40', seqscan: 'on', bitmapscan: 'on', sort: 'on', method: '' });
  });
});
