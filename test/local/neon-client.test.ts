/**
 * The workers' database client, as they build it (`createDb`: Neon's `@neondatabase/serverless`
 * driver through `drizzle-orm/neon-http`), against the Neon stand-in: values of every common type
 * and their JavaScript types, a batch as one transaction in one request, refused statements with
 * their Postgres fields, an endpoint that cannot be reached, and where the driver posts. The
 * expected values are written by hand from Postgres' text output and the driver's documented type
 * parsing (drizzle's neon-http driver keeps dates, timestamps, intervals and numeric arrays as text).
 */
import { neonConfig, NeonDbError } from '@neondatabase/serverless';
import { DrizzleQueryError, sql } from 'drizzle-orm';
import { integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startNeonStandIn, type NeonStandIn } from '../../local/neon-http.ts';
import { createDb } from '../../shared/runtime/db.ts';
import { databaseFailure, type Database } from '../../shared/core/database.ts';

const kinds = pgTable('kinds', {
  id: integer('id').primaryKey(),
  doc: jsonb('doc'),
  tags: text('tags').array(),
});

let standIn: NeonStandIn;
let db: Database;
/** Requests the driver sent, counted through its documented `fetchFunction` setting. */
let requests = 0;

beforeAll(async () => {
  standIn = await startNeonStandIn();
  db = createDb(standIn.connectionString);
  await db.execute(sql`create table if not exists kinds (id int primary key, doc jsonb, tags text[])`);
  neonConfig.fetchFunction = (...args: Parameters<typeof fetch>) => {
    requests++;
    return fetch(...args);
  };
});

afterEach(() => {
  requests = 0;
});

afterAll(async () => {
  neonConfig.fetchFunction = undefined;
  await standIn?.close();
});

/** The error a promise rejects with (failing the test if it resolves). */
async function refused(run: PromiseLike<unknown>): Promise<unknown> {
  return run.then(
    () => expect.unreachable('expected a failure'),
    (error: unknown) => error,
  );
}

describe('createDb() against the Neon stand-in', () => {
  it('reads scalars of every common type as the driver parses them', async () => {
    const when = new Date('2024-05-06T07:08:09.123Z');
    const { rows, command, rowCount } = await db.execute(sql`select
      ${'héllo, wörld 👋 \'"\\'}::text as t, ${42}::int as i, ${9007199254740993n}::int8 as big, ${true}::bool as yes,
      ${false}::bool as no, ${null}::text as nothing, ${JSON.stringify({ a: 1, nested: [1, 'ü', null] })}::jsonb as doc,
      ${when}::timestamptz as at, ${when}::date as day, '1.50'::numeric as num, 2.5::float8 as f8, 1.25::float4 as f4,
      7::int2 as small, 'x'::varchar as v, interval '1 day 2 hours' as span, '[1,2,3]'::vector as vec`);
    expect(command).toBe('SELECT');
    expect(rowCount).toBe(1);
    expect(rows).toEqual([
      {
        t: 'héllo, wörld 👋 \'"\\',
        i: 42,
        big: '9007199254740993',
        yes: true,
        no: false,
        nothing: null,
        doc: { a: 1, nested: [1, 'ü', null] },
        at: '2024-05-06 07:08:09.123+00',
        day: '2024-05-06',
        num: '1.50',
        f8: 2.5,
        f4: 1.25,
        small: 7,
        v: 'x',
        span: '1 day 02:00:00',
        vec: '[1,2,3]',
      },
    ]);
  });

  it('sends arrays as one parameter each and reads arrays of every common type', async () => {
    const texts = ['a', 'b c', 'with "quote"', 'back\\slash', 'comma,', 'NULL', '', null];
    const ids = ['3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f', '9a1c2e3f-4b5d-4e6f-8a7b-0c1d2e3f4a5b'];
    const { rows } = await db.execute(sql`select ${sql.param([1, 2, 3])}::int[] as ints, ${sql.param(texts)}::text[] as texts,
      ${sql.param([
        [1, 2],
        [3, 4],
      ])}::int[][] as grid, ${sql.param(ids)}::uuid[] as ids, array[true, false, null] as bools,
      array[1.5, 2.25]::float8[] as floats, array['{"a":1}'::jsonb, 'null'::jsonb] as docs, array[1.5, 2]::numeric[] as nums,
      array[1, 2]::int8[] as bigs, '{}'::int[] as empty,
      (select count(*)::int from unnest(${sql.param(ids)}::uuid[])) as counted`);
    expect(rows).toEqual([
      {
        ints: [1, 2, 3],
        texts,
        grid: [
          [1, 2],
          [3, 4],
        ],
        ids,
        bools: [true, false, null],
        floats: [1.5, 2.25],
        docs: [{ a: 1 }, null],
        nums: '{1.5,2}',
        bigs: ['1', '2'],
        empty: [],
        counted: 2,
      },
    ]);
  });

  it('runs a batch as one transaction in one request, each result in its own shape', async () => {
    const [inserted, selected, counted] = await db.batch([
      db
        .insert(kinds)
        .values({ id: 1, doc: { k: 'v' }, tags: ['x', 'y z'] })
        .onConflictDoUpdate({ target: kinds.id, set: { doc: { k: 'v' } } })
        .returning({ id: kinds.id }),
      db
        .select({ doc: kinds.doc, tags: kinds.tags })
        .from(kinds)
        .where(sql`${kinds.id} = 1`),
      db.execute(sql`select count(*)::int as n from kinds`),
    ]);
    expect(requests).toBe(1);
    expect(inserted).toEqual([{ id: 1 }]);
    expect(selected).toEqual([{ doc: { k: 'v' }, tags: ['x', 'y z'] }]);
    expect(counted.rows).toEqual([{ n: 1 }]);
  });

  it('fails as Postgres refused: the fields behind drizzle’s error, a contract failure naming the constraint', async () => {
    const error = await refused(db.insert(kinds).values({ id: 1 }));
    expect(error).toBeInstanceOf(DrizzleQueryError);
    const cause = (error as DrizzleQueryError).cause;
    expect(cause).toBeInstanceOf(NeonDbError);
    expect(cause).toMatchObject({
      name: 'NeonDbError',
      code: '23505',
      constraint: 'kinds_pkey',
      table: 'kinds',
      schema: 'public',
      severity: 'ERROR',
      detail: 'Key (id)=(1) already exists.',
    });
    expect(databaseFailure(error)?.error).toMatchObject({
      code: 'CONFLICT',
      details: { sqlstate: '23505', constraint: 'kinds_pkey', columns: ['id'] },
    });
  });

  it('rolls a batch back on its first error, which arrives bare', async () => {
    const error = await refused(db.batch([db.insert(kinds).values({ id: 2 }), db.execute(sql`select 1/0`)]));
    expect(error).toBeInstanceOf(NeonDbError);
    expect(error).toMatchObject({ code: '22012' });
    expect(databaseFailure(error)?.error).toMatchObject({ code: 'DATABASE_ERROR', retryable: false });
    const { rows } = await db.execute(sql`select count(*)::int as n from kinds where id = 2`);
    expect(rows).toEqual([{ n: 0 }]);
  });

  it('says the endpoint could not be reached, with the cause, and calls that transient', async () => {
    const error = await refused(createDb('postgres://u:p@127.0.0.1:9/db').execute(sql`select 1`));
    const cause = error instanceof DrizzleQueryError ? error.cause : error;
    expect(cause).toBeInstanceOf(NeonDbError);
    expect((cause as NeonDbError).message).toMatch(/^Error connecting to database: /);
    expect((cause as NeonDbError).code).toBeUndefined();
    expect((cause as NeonDbError).sourceError).toBeDefined();
    expect(databaseFailure(error)).toMatchObject({ status: 503, error: { code: 'DATABASE_ERROR', retryable: true } });
  });
});

describe('where the driver posts', () => {
  const endpoint = (host: string, port: string, jwtAuth = false) => {
    const setting = neonConfig.fetchEndpoint;
    return typeof setting === 'function' ? setting(host, port, { jwtAuth }) : setting;
  };

  it("posts to Neon's api host for a Neon host, as the driver does by default", () => {
    expect(endpoint('ep-cool-name-123.us-east-2.aws.neon.tech', '')).toBe('https://api.us-east-2.aws.neon.tech/sql');
    expect(endpoint('ep-cool-name-123.us-east-2.aws.neon.tech', '', true)).toBe('https://apiauth.us-east-2.aws.neon.tech/sql');
  });

  it("posts to a loopback stand-in's own port over plain HTTP", () => {
    expect(endpoint('127.0.0.1', '5433')).toBe('http://127.0.0.1:5433/sql');
    expect(endpoint('localhost', '6000')).toBe('http://localhost:6000/sql');
  });
});
