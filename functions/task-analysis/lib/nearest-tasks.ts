/**
 * The tasks nearest to a query vector within a project: exact while the project is small, through
 * the HNSW index once it is large. One `db.batch`: one transaction, one round trip.
 *
 * The index is shared by every project and every embedding model, and pgvector filters its
 * candidates after the index scan: with a plain HNSW scan, a project or model filter can leave fewer
 * than `limit` results, or none ("starving"). So the index is used only
 * - when the scope (the project, or the documents asked for) holds at least `indexMinTasks` tasks
 *   embedded by the configured model: below that an exact scan is fast enough and has recall 1;
 * - when those tasks are at least `indexMinShare` of the index's vectors, so that the scan meets
 *   enough of them within pgvector's scan bound (`hnsw.max_scan_tuples`);
 * - with pgvector's iterative index scan (`hnsw.iterative_scan`, pgvector >= 0.8), which goes on
 *   scanning until `limit` tasks pass the filters, and a per-query `hnsw.ef_search`; and with the
 *   planner held to the index. All are set with `set_config(…, true)` (`SET LOCAL`), so they last
 *   for this transaction only.
 * The choice is made in SQL from a count the search makes anyway, in the same transaction as the
 * search, so it costs no round trip; the threshold is applied by the caller to these nearest tasks,
 * so it never filters inside the index scan. bench/search-at-scale.ts measures both methods.
 */
import { sql, type SQL } from 'drizzle-orm';
import { SEARCH_INDEX } from '../../../drizzle/schema.ts';
import { uuidArray, type Database } from '../../../shared/core/database.ts';
import { vectorLiteral } from '../../../shared/records/vectors.ts';

/** When the index is used, and how far it searches. */
export interface NearestTasksOptions {
  /** Fewest tasks in scope, embedded by the configured model, for the index to be used. */
  indexMinTasks?: number;
  /** Least share of the index's vectors those tasks must be (0–1) for the index to be used. */
  indexMinShare?: number;
  /** `hnsw.ef_search`: the candidates an index search keeps (at least `limit`). */
  efSearch?: number;
}

/** The defaults of {@link NearestTasksOptions}, chosen from bench/search-at-scale.ts. */
export const NEAREST_TASKS_DEFAULTS = {
  indexMinTasks: 10_000,
  indexMinShare: 0.02,
  efSearch: 1_000,
} as const satisfies Required<NearestTasksOptions>;

export interface NearestTasksQuery {
  projectId: string;
  /** The configured embedding model: only its vectors are compared with the query's. */
  model: string;
  vector: Float32Array;
  limit: number;
  /** Lower-case document ids: search only these documents (of the project). */
  documentIds?: string[];
}

export interface NearestTask {
  task_id: string;
  text: string;
  document_id: string;
  document_title: string;
  position: number;
  /** Cosine similarity; NaN for a zero vector (no direction), which only an exact scan meets. */
  similarity: number;
}

export interface NearestTasks {
  /** The nearest tasks, nearest first, whatever their similarity. */
  tasks: NearestTask[];
  /** Tasks in scope, and those of them embedded by the configured model. */
  total: number;
  searchable: number;
  /** How they were found: every task scored, or through the HNSW index. */
  method: 'exact' | 'index';
  /** Of `documentIds`, those the project has. */
  knownDocumentIds: string[];
}

/** The nearest `limit` tasks to `vector` in scope, with the counts of the scope. */
export async function findNearestTasks(db: Database, query: NearestTasksQuery, options: NearestTasksOptions = {}): Promise<NearestTasks> {
  const [settings, scope, search, known] = nearestTasksStatements(query, options);
  return readNearestTasks(await db.batch([db.execute(settings), db.execute(scope), db.execute(search), db.execute(known)]));
}

/**
 * The statements of {@link findNearestTasks}, in order, for one `db.batch` (one transaction):
 * the settings, the counts and method, the search, the documents known.
 */
export function nearestTasksStatements(query: NearestTasksQuery, options: NearestTasksOptions = {}): readonly [SQL, SQL, SQL, SQL] {
  const { indexMinTasks, indexMinShare, efSearch } = { ...NEAREST_TASKS_DEFAULTS, ...options };
  const { projectId, model, limit } = query;
  const documents = query.documentIds ?? [];
  const target = sql`${vectorLiteral(query.vector)}::vector`;
  const inScope = sql`t.project_id = ${projectId} ${query.documentIds ? sql`and t.document_id = any(${uuidArray(documents)})` : sql``}`;
  const searchable = sql`t.embedding_status = 'completed' and t.embedding_model = ${model}`;

  return [
    // SET LOCAL, in its function form (parameterised). Only index scans read them.
    sql`select set_config('hnsw.ef_search', ${String(Math.max(efSearch, limit))}, true), set_config('hnsw.iterative_scan', 'relaxed_order', true)`,
    // The counts, and the method for the next statement. reltuples is the catalog's estimate of the
    // index's vectors (-1 before the table is first vacuumed or analysed: then size alone decides);
    // no index, no row: exact. With the index chosen, the planner is kept from its alternatives (a
    // scan of the table or of the project's rows, then a sort): its cost model cannot tell that the
    // index is right here, and took them even at 40,000 tasks.
    sql`
      with counts as (
        select count(*)::int as total, (count(*) filter (where ${searchable}))::int as searchable
        from tasks t where ${inScope}
      ), choice as (
        select total, searchable,
               case when searchable >= ${indexMinTasks}::int
                     and searchable >= ${indexMinShare}::float8 * (select reltuples from pg_class where oid = to_regclass(${SEARCH_INDEX}))
                    then 'index' else 'exact' end as method
        from counts
      )
      select total, searchable, set_config('edge_tools.search_method', method, true) as method,
             set_config('enable_seqscan', case when method = 'index' then 'off' else current_setting('enable_seqscan') end, true),
             set_config('enable_bitmapscan', case when method = 'index' then 'off' else current_setting('enable_bitmapscan') end, true),
             set_config('enable_sort', case when method = 'index' then 'off' else current_setting('enable_sort') end, true)
      from choice`,
    // One branch runs, the other is cut by its one-time filter. Exact: every task in scope scored
    // inside a materialized CTE, which the index cannot serve; a zero vector's distance is NaN,
    // sorted after every number. Index: ordered by the distance alone, as the index returns it
    // (relaxed order: re-sorted below).
    sql`
      with every_task as materialized (
        select t.id, t.embedding <=> ${target} as distance
        from tasks t
        where current_setting('edge_tools.search_method') = 'exact' and ${inScope} and ${searchable}
      ),
      nearest as materialized (
        (select t.id, t.embedding <=> ${target} as distance
         from tasks t
         where current_setting('edge_tools.search_method') = 'index' and ${inScope} and ${searchable}
         order by t.embedding <=> ${target}
         limit ${limit})
        union all
        (select id, distance from every_task order by distance, id limit ${limit})
      )
      select n.id as task_id, t.text, t.document_id, d.title as document_title, t.position, 1 - n.distance as similarity
      from nearest n join tasks t on t.id = n.id join documents d on d.id = t.document_id
      order by n.distance, n.id`,
    // Empty unless documentIds was given.
    sql`select id from documents where project_id = ${projectId} and id = any(${uuidArray(documents)})`,
  ];
}

/** A statement's result, as far as reading it goes. */
interface Rows {
  rows: Record<string, unknown>[];
}

/** The answer, from the results of {@link nearestTasksStatements}. */
export function readNearestTasks([, scope, nearest, known]: readonly [unknown, Rows, Rows, Rows]): NearestTasks {
  const counts = scope.rows[0] as { total: number; searchable: number; method: 'exact' | 'index' };
  return {
    tasks: (nearest.rows as unknown as NearestTask[]).map((row) => ({ ...row, similarity: Number(row.similarity) })),
    total: counts.total,
    searchable: counts.searchable,
    method: counts.method,
    knownDocumentIds: (known.rows as { id: string }[]).map((row) => row.id),
  };
}
