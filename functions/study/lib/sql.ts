/** SQL pieces the study tools share: per-project ids and timestamps as the tools answer them. */
import { sql, type SQL } from 'drizzle-orm';
import type { STUDY_ENTITIES } from '../../../drizzle/schema.ts';

export type StudyEntity = (typeof STUDY_ENTITIES)[number];

/**
 * An INSERT reserving `count` consecutive ids of `entity` in the project, returning `last_id`, the
 * highest of them (the first is `last_id - count + 1`). Use it as a CTE of the statement that
 * inserts the rows: the counter row stays locked until that statement's transaction ends, so
 * concurrent calls never get the same id. `source` (a FROM or WHERE clause) reserves only when it
 * yields a row. A retried insert that turns out to exist already leaves a gap, as a sequence would.
 *
 * @example
 * sql`with ids as (${reserveIds(projectId, 'plan')}) insert into study_plans (project_id, id, title)
 *     select ${projectId}, ids.last_id, ${title} from ids`
 */
export function reserveIds(projectId: string, entity: StudyEntity, count: number = 1, source: SQL = sql``): SQL {
  return sql`insert into study_counters as c (project_id, entity, last_id)
    select ${projectId}::uuid, ${entity}::text, ${count}::int ${source}
    on conflict (project_id, entity) do update set last_id = c.last_id + excluded.last_id
    returning last_id`;
}

/** A timestamp column as the tools answer it: ISO 8601 in UTC, to the millisecond. */
export function isoTime(column: SQL): SQL {
  return sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
