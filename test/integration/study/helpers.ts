/** What the study planner's tests share: projects of their own, calls, and row counts. */
import { sql, type SQL } from 'drizzle-orm';
import { expect } from 'vitest';
import { callTool, createTenant, db, type Answer } from '../helpers.ts';

export type Data = Record<string, any>;

export interface Tenant {
  projectId: string;
  apiKey: string;
}

/**
 * A new project with its own API key. The study tests work in projects nobody else writes to, so
 * that "latest", counts and ids are theirs alone whatever other suites run meanwhile.
 */
export function newTenant(name: string): Promise<Tenant> {
  return createTenant(name);
}

/** Calls a tool as `tenant`. */
export function call(tenant: Tenant, toolId: string, input: unknown): Promise<Answer<Data>> {
  return callTool<Data>(toolId, input, { key: tenant.apiKey });
}

/** Calls a tool as `tenant` and returns its data, failing the test when the call fails. */
export async function data(tenant: Tenant, toolId: string, input: unknown): Promise<Data> {
  const { status, body } = await call(tenant, toolId, input);
  if (!body.success) throw new Error(`${toolId} failed with ${status}: ${body.message}`);
  return body.data;
}

/** Expects a failure with this status and code, and returns its error. */
export async function failure(tenant: Tenant, toolId: string, input: unknown, status: number, code: string): Promise<Data> {
  const { status: actual, body } = await call(tenant, toolId, input);
  expect(body, JSON.stringify(body)).toMatchObject({ success: false, error: { code } });
  expect(actual).toBe(status);
  if (body.success) throw new Error('unreachable');
  expect(body.message).toBe(body.error.message);
  return body.error as Data;
}

/** The number of rows of `table` (an identifier from the test itself) in the project matching `where`. */
export async function rowCount(table: string, projectId: string, where: SQL = sql`true`): Promise<number> {
  const { rows } = await db.execute(
    sql`select count(*)::int as n from ${sql.identifier(table)} where project_id = ${projectId} and ${where}`,
  );
  return (rows[0] as { n: number }).n;
}

/**
 * Makes inserts into `table` whose new row matches `when` fail inside their transaction, with
 * SQLSTATE `sqlstate`, the first `times` times (a sequence counts them: it is not rolled back with
 * the failed transaction). Returns the function that removes the fault.
 */
export async function failInserts(table: string, when: string, sqlstate: string, times: number): Promise<() => Promise<void>> {
  const name = `test_fault_${crypto.randomUUID().replace(/-/g, '')}`;
  await db.execute(sql.raw(`create sequence ${name}_count`));
  await db.execute(
    sql.raw(`create function ${name}() returns trigger language plpgsql as $$
      begin
        if nextval('${name}_count') <= ${times} then raise exception 'injected fault' using errcode = '${sqlstate}'; end if;
        return new;
      end $$`),
  );
  await db.execute(sql.raw(`create trigger ${name} before insert on ${table} for each row when (${when}) execute function ${name}()`));
  return async () => {
    await db.execute(sql.raw(`drop trigger ${name} on ${table}`));
    await db.execute(sql.raw(`drop function ${name}()`));
    await db.execute(sql.raw(`drop sequence ${name}_count`));
  };
}
