// The Neon stand-in, driven by the real clients: @neondatabase/serverless `neon()` and
// drizzle-orm/neon-http, plus raw HTTP for what the clients never send.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { neon, neonConfig, type NeonQueryFunction } from '@neondatabase/serverless';
import { cosineDistance, eq, sql as dsql } from 'drizzle-orm';
import { drizzle, type NeonHttpDatabase } from 'drizzle-orm/neon-http';
import { pgTable, serial, text, vector } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNeonStandIn, type NeonStandIn } from '../../local/neon-http.ts';

const items = pgTable('items', {
  id: serial('id').primaryKey(),
  name: text('name').notNull(),
  embedding: vector('embedding', { dimensions: 3 }).notNull(),
});

const users = pgTable('users', {
  id: serial('id').primaryKey(),
  email: text('email').notNull().unique(),
});

let standIn: NeonStandIn;
let sql: NeonQueryFunction<false, false>;
let db: NeonHttpDatabase;

beforeAll(async () => {
  standIn = await startNeonStandIn();
  neonConfig.fetchEndpoint = standIn.url;
  sql = neon(standIn.connectionString);
  db = drizzle({ client: sql });
});

afterAll(async () => {
  await standIn?.close();
});

/** The Postgres code, wherever the client put it (drizzle wraps single-query errors in `cause`). */
async function errorOf(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  const error: unknown = await promise.then(
    () => expect.unreachable('expected the query to fail'),
    (e: unknown) => e,
  );
  const { cause } = error as { cause?: unknown };
  return (cause instanceof Error && 'code' in cause ? cause : error) as Record<string, unknown>;
}

function post(body: string, headers: Record<string, string> = {}, path = '/sql'): Promise<Response> {
  return fetch(new URL(path, standIn.url), { method: 'POST', body, headers });
}

describe('neon() client', () => {
  it('round-trips params of common types as Postgres text', async () => {
    const when = new Date('2024-05-06T07:08:09.123Z');
    const [row] = await sql`select
      ${'héllo, wörld 👋 \'"\\'}::text as t, ${42}::int as i, ${9007199254740993n}::int8 as big,
      ${'12345678901234567890.123456789'}::numeric as num, ${true}::bool as yes, ${false}::bool as no,
      ${null}::text as nothing, ${{ a: 1, nested: [1, 'ü', null] }}::jsonb as doc,
      ${when}::timestamptz as at, ${[1, 2, 3]}::int[] as ints,
      ${['a', 'b "q"', null, 'ü,{}']}::text[] as texts, ${Buffer.from([0, 255, 16])}::bytea as bytes`;
    expect(row).toMatchObject({
      t: 'héllo, wörld 👋 \'"\\',
      i: 42,
      big: '9007199254740993',
      num: '12345678901234567890.123456789',
      yes: true,
      no: false,
      nothing: null,
      doc: { a: 1, nested: [1, 'ü', null] },
      ints: [1, 2, 3],
      texts: ['a', 'b "q"', null, 'ü,{}'],
    });
    expect(Buffer.from(row?.bytes as Uint8Array)).toEqual(Buffer.from([0, 255, 16]));
    // drizzle-orm/neon-http makes timestamps raw strings process-wide, so compare instants.
    const [same] = await sql`select ${row?.at}::timestamptz = ${when.toISOString()}::timestamptz as ok`;
    expect(same?.ok).toBe(true);
  });

  it('answers full results with fields, command and rowCount', async () => {
    const result = await sql.query('select $1::text as a, 2::int8 as b', ['x'], { fullResults: true });
    expect(result.command).toBe('SELECT');
    expect(result.rowCount).toBe(1);
    expect(result.rows).toEqual([{ a: 'x', b: '2' }]);
    expect(result.fields.map((f) => [f.name, f.dataTypeID])).toEqual([
      ['a', 25],
      ['b', 20],
    ]);
  });

  it('commits a transaction', async () => {
    await sql`create table accounts (id int primary key, balance int not null)`;
    const [inserted, total] = await sql.transaction([
      sql`insert into accounts values (1, 100), (2, 50)`,
      sql`select sum(balance)::int as total from accounts`,
    ]);
    expect(inserted).toEqual([]);
    expect(total).toEqual([{ total: 150 }]);
  });

  it('rolls a transaction back on the first error and reports its code', async () => {
    const error = await errorOf(
      sql.transaction([
        sql`insert into accounts values (3, 10)`,
        sql`insert into accounts values (1, 0)`,
        sql`insert into accounts values (4, 10)`,
      ]),
    );
    expect(error.code).toBe('23505');
    expect(error.constraint).toBe('accounts_pkey');
    expect(await sql`select id from accounts order by id`).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('honours the isolation level and read-only batch options', async () => {
    const [level, readOnly] = await sql.transaction([sql`show transaction_isolation`, sql`show transaction_read_only`], {
      isolationLevel: 'Serializable',
      readOnly: true,
    });
    expect(level).toEqual([{ transaction_isolation: 'serializable' }]);
    expect(readOnly).toEqual([{ transaction_read_only: 'on' }]);
    const error = await errorOf(sql.transaction([sql`insert into accounts values (5, 1)`], { readOnly: true }));
    expect(error.code).toBe('25006');
  });

  it('never leaks an open transaction into the next request', async () => {
    await sql`begin isolation level serializable`;
    expect(await sql`show transaction_isolation`).toEqual([{ transaction_isolation: 'read committed' }]);
  });

  it('reports undefined tables (42P01) with the error position', async () => {
    const error = await errorOf(sql`select * from missing_table`);
    expect(error).toMatchObject({ code: '42P01', position: '15', severity: 'ERROR' });
    expect(error.message).toBe('relation "missing_table" does not exist');
  });

  it('rejects several statements in one query string (42601)', async () => {
    const error = await errorOf(sql.query('select 1; select 2'));
    expect(error.code).toBe('42601');
  });

  it('keeps 100 concurrent transactions correct', async () => {
    await sql`create table counter (n int not null)`;
    await sql`insert into counter values (0)`;
    await Promise.all(Array.from({ length: 100 }, () => sql.transaction([sql`update counter set n = n + 1`, sql`select n from counter`])));
    expect(await sql`select n from counter`).toEqual([{ n: 100 }]);
  });
});

describe('drizzle-orm/neon-http', () => {
  beforeAll(async () => {
    await db.execute(dsql`create table items (id serial primary key, name text not null, embedding vector(3) not null)`);
    await db.execute(dsql`create table users (id serial primary key, email text not null unique)`);
  });

  it('inserts vectors with returning and orders by cosineDistance', async () => {
    const inserted = await db
      .insert(items)
      .values([
        { name: 'x', embedding: [1, 0, 0] },
        { name: 'y', embedding: [0, 1, 0] },
        { name: 'xy', embedding: [0.5, 0.5, 0] },
      ])
      .returning();
    expect(inserted.map((r) => [r.name, r.embedding])).toEqual([
      ['x', [1, 0, 0]],
      ['y', [0, 1, 0]],
      ['xy', [0.5, 0.5, 0]],
    ]);

    const query = [0.9, 0.1, 0];
    const ranked = await db
      .select({ name: items.name, distance: cosineDistance(items.embedding, query) })
      .from(items)
      .orderBy(cosineDistance(items.embedding, query));
    expect(ranked.map((r) => r.name)).toEqual(['x', 'xy', 'y']);
    expect(Number(ranked[0]?.distance)).toBeCloseTo(1 - 0.9 / Math.hypot(0.9, 0.1), 6);
  });

  it('runs db.batch as one transaction', async () => {
    const [added, found] = await db.batch([
      db
        .insert(items)
        .values({ name: 'z', embedding: [0, 0, 1] })
        .returning({ id: items.id }),
      db.select({ name: items.name }).from(items).where(eq(items.name, 'z')),
    ]);
    expect(added).toHaveLength(1);
    expect(found).toEqual([{ name: 'z' }]);

    const error = await errorOf(
      db.batch([db.insert(items).values({ name: 'lost', embedding: [1, 1, 1] }), db.execute(dsql`select * from missing_table`)]),
    );
    expect(error.code).toBe('42P01');
    expect(await db.select().from(items).where(eq(items.name, 'lost'))).toEqual([]);
  });

  it('surfaces unique violations (23505) as err.cause', async () => {
    await db.insert(users).values({ email: 'a@example.com' });
    const duplicate = db.insert(users).values({ email: 'a@example.com' });
    const error = await errorOf(duplicate);
    await expect(duplicate).rejects.toHaveProperty('cause.code', '23505');
    expect(error).toMatchObject({ code: '23505', constraint: 'users_email_key', table: 'users' });
    expect(error.detail).toBe('Key (email)=(a@example.com) already exists.');
  });
});

describe('raw HTTP', () => {
  it('answers /health, and 404 JSON elsewhere', async () => {
    const health = await fetch(new URL('/health', standIn.url));
    expect(health.status).toBe(200);
    const missing = await post('{}', {}, '/nope');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toHaveProperty('message');
  });

  it("answers in Neon's shape and converts non-string JSON params like Neon", async () => {
    const response = await post(JSON.stringify({ query: 'select $1::int + 1 as n, $2::text[] as a', params: [41, ['x', null, 'y z']] }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      fields: [
        { name: 'n', dataTypeID: 23, tableID: 0, columnID: 0, dataTypeSize: 4, dataTypeModifier: -1, format: 'text' },
        { name: 'a', dataTypeID: 1009, tableID: 0, columnID: 0, dataTypeSize: -1, dataTypeModifier: -1, format: 'text' },
      ],
      rows: [['42', '{x,NULL,"y z"}']],
      command: 'SELECT',
      rowCount: 1,
      rowAsArray: true,
    });
  });

  it('derives command and rowCount from the command tag', async () => {
    const tags = await post(
      JSON.stringify({
        queries: [
          { query: 'create table tags (v int)' },
          { query: 'insert into tags values (1), (2)' },
          { query: 'update tags set v = v + 1' },
          { query: '' },
        ],
      }),
    );
    const { results } = (await tags.json()) as { results: { command: string; rowCount: number | null }[] };
    expect(results.map((r) => [r.command, r.rowCount])).toEqual([
      ['CREATE', null],
      ['INSERT', 2],
      ['UPDATE', 2],
      ['', null],
    ]);
  });

  it('sends every error field, null where Postgres gave none', async () => {
    const response = await post(JSON.stringify({ query: 'select 1/0' }));
    expect(response.status).toBe(400);
    const body = (await response.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual([
      'code',
      'column',
      'constraint',
      'dataType',
      'detail',
      'file',
      'hint',
      'internalPosition',
      'internalQuery',
      'line',
      'message',
      'position',
      'routine',
      'schema',
      'severity',
      'table',
      'where',
    ]);
    expect(body).toMatchObject({ message: 'division by zero', code: '22012', detail: null, hint: null });
  });

  it('answers malformed requests with 400 JSON and keeps serving', async () => {
    for (const body of ['not json', '[]', '{"queries":[1]}', '{"query":1}', '{"query":"select 1","params":{}}', '']) {
      const response = await post(body);
      expect(response.status, body).toBe(400);
      expect(((await response.json()) as { message: string }).message).toMatch(/could not parse the HTTP request body/);
    }
    const badLevel = await post('{"queries":[]}', { 'Neon-Batch-Isolation-Level': 'Chaos' });
    expect(badLevel.status).toBe(400);
    expect(await badLevel.json()).toMatchObject({ message: 'invalid isolation level' });
    const tooLarge = await post(JSON.stringify({ query: 'select 1', params: ['x'.repeat(11 * 1024 * 1024)] }));
    expect(tooLarge.status).toBe(413);
    expect(await sql`select 1 as one`).toEqual([{ one: 1 }]);
  });

  it("answers 507 past Neon's 10 MiB response limit and rolls the batch back", async () => {
    const single = await post(JSON.stringify({ query: "select repeat('x', 11 * 1024 * 1024)" }));
    expect(single.status).toBe(507);
    // Neon's own words and shape (proxy sql_over_http.rs: ResponseTooLarge -> 507 INSUFFICIENT_STORAGE).
    expect(await single.json()).toMatchObject({ message: 'response is too large (max is 10485760 bytes)', code: '' });
    // Like Neon, it counts the rows' bytes as Postgres sent them (a 4-byte length per value), not the JSON.
    const limit = 10 * 1024 * 1024;
    expect((await post(JSON.stringify({ query: `select repeat('x', ${limit - 4})` }))).status).toBe(200);
    expect((await post(JSON.stringify({ query: `select repeat('x', ${limit - 3})` }))).status).toBe(507);
    const batch = await post(
      JSON.stringify({
        queries: [
          { query: 'create table wide (t text)' },
          { query: "insert into wide select repeat('x', 6 * 1024 * 1024)" },
          { query: 'select t from wide' },
          { query: 'select t from wide' },
        ],
      }),
    );
    expect(batch.status).toBe(507);
    expect(await sql`select to_regclass('wide') as wide`).toEqual([{ wide: null }]);
  });

  it('fails COPY FROM STDIN cleanly instead of aborting PGlite', async () => {
    await sql`create table copied (v int)`;
    const error = await errorOf(sql`copy copied from stdin`);
    expect(error.code).toBe('57014');
    expect(await sql`select count(*)::int as n from copied`).toEqual([{ n: 0 }]);
  });
});

describe('file-backed data dir', () => {
  it('keeps data across close and restart', async () => {
    const dataDir = join(await mkdtemp(join(tmpdir(), 'neon-standin-')), 'nested', 'pgdata');
    const endpoint = neonConfig.fetchEndpoint;
    // Route by the connection string's host and port, so each stand-in gets its own requests.
    neonConfig.fetchEndpoint = (host, port) => `http://${host}:${port}/sql`;
    try {
      const first = await startNeonStandIn({ dataDir });
      const before = neon(first.connectionString);
      await before`create table notes (body text)`;
      await before`insert into notes values (${'kept ✓'})`;
      await first.close();

      const second = await startNeonStandIn({ dataDir });
      try {
        const after = neon(second.connectionString);
        expect(await after`select body from notes`).toEqual([{ body: 'kept ✓' }]);
        expect(await after`select extname from pg_extension where extname = 'vector'`).toHaveLength(1);
      } finally {
        await second.close();
      }
    } finally {
      neonConfig.fetchEndpoint = endpoint;
      await rm(join(dataDir, '..', '..'), { recursive: true, force: true });
    }
  });
});
