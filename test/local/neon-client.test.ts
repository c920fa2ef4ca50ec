/**
 * shared/runtime/neon-http.ts judged by @neondatabase/serverless itself: the same statements, the
 * same params, through the driver's `neon()` and through this client, against the Neon stand-in;
 * the answers (values, their JavaScript types, full results, transactions, errors) must be equal.
 * drizzle's neon-http driver sets date, timestamp, interval and numeric-array parsers to keep text,
 * process-wide: the driver is compared with those in place, as the workers used it.
 */
import { neon, neonConfig, NeonDbError as DriverError, type NeonQueryFunction } from '@neondatabase/serverless';
import { drizzle } from 'drizzle-orm/neon-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNeonStandIn, type NeonStandIn } from '../../local/neon-http.ts';
import { NeonDbError, neonHttp, parseArrayLiteral, sqlEndpoint, type NeonHttpClient } from '../../shared/runtime/neon-http.ts';

let standIn: NeonStandIn;
let driver: NeonQueryFunction<false, false>;
let client: NeonHttpClient;

beforeAll(async () => {
  standIn = await startNeonStandIn();
  neonConfig.fetchEndpoint = standIn.url;
  driver = neon(standIn.connectionString);
  drizzle({ client: driver }); // installs drizzle's text parsers, as createDb did with the driver
  client = neonHttp(standIn.connectionString);
  await client(`create table if not exists kinds (id int primary key, doc jsonb, tags text[], at timestamptz, amount numeric(10,2))`);
});

afterAll(async () => {
  await standIn?.close();
});

const PARAMS: unknown[] = [
  'héllo, wörld 👋 \'"\\',
  42,
  9007199254740993n,
  true,
  false,
  null,
  { a: 1, nested: [1, 'ü', null], quote: 'say "hi"' },
  new Date('2024-05-06T07:08:09.123Z'),
  [1, 2, 3],
  ['a', 'b c', 'with "quote"', 'back\\slash', 'comma,', 'NULL', '', null],
  [[1, 2], [3, 4]],
  ['3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f', '9a1c2e3f-4b5d-4e6f-8a7b-0c1d2e3f4a5b'],
];

const STATEMENTS: [string, string, unknown[]][] = [
  [
    'scalars of every common type',
    `select $1::text as t, $2::int as i, $3::int8 as big, $4::bool as yes, $5::bool as no, $6::text as nothing,
            $7::jsonb as doc, $7::json as js, $8::timestamptz as at, $8::timestamp as naive, $8::date as day,
            '1.50'::numeric as num, 2.5::float8 as f8, 1.25::float4 as f4, 7::int2 as small, 'x'::varchar as v,
            interval '1 day 2 hours' as span, gen_random_uuid() is not null as has_uuid, '[1,2,3]'::vector as vec`,
    PARAMS.slice(0, 8),
  ],
  [
    'arrays of every common type',
    `select $1::int[] as ints, $2::text[] as texts, $3::int[][] as grid, $4::uuid[] as ids, array[true, false, null] as bools,
            array[1.5, 2.25]::float8[] as floats, array['{"a":1}'::jsonb, 'null'::jsonb] as docs, array[1.5, 2]::numeric[] as nums,
            array[now()::date] as days, array[1, 2]::int8[] as bigs, array['a'::varchar] as varchars, '{}'::int[] as empty`,
    PARAMS.slice(8),
  ],
  ['a uuid array as one param, for = any()', 'select count(*)::int as n from unnest($1::uuid[]) as id', [PARAMS[11]]],
];

describe('neonHttp() against the Neon driver', () => {
  it.each(STATEMENTS)('answers %s with the same values, as arrays and as objects', async (_name, query, params) => {
    for (const options of [{}, { arrayMode: true }, { fullResults: true }, { arrayMode: true, fullResults: true }]) {
      const expected = (await driver.query(query, params, options)) as unknown as Record<string, unknown>;
      const actual = (await client(query, params, options)) as Record<string, unknown>;
      if ('fields' in expected) {
        const { rows, fields, rowCount, command, rowAsArray } = expected;
        expect(actual).toMatchObject({ rows, fields, rowCount, command, rowAsArray });
      } else {
        expect(actual).toEqual(expected);
      }
    }
  });

  it('runs a transaction in one request, each result in its own mode, as the driver does', async () => {
    const statements = (sql: (query: string, params: unknown[], options: object) => unknown) => [
      sql('insert into kinds (id, doc, tags, at, amount) values ($1, $2, $3, $4, $5) on conflict (id) do update set doc = excluded.doc returning id', [1, { k: 'v' }, ['x', 'y z'], new Date('2025-01-02T03:04:05Z'), '12.50'], { arrayMode: false, fullResults: true }),
      sql('select doc, tags, at, amount from kinds where id = $1', [1], { arrayMode: true, fullResults: true }),
      sql('select count(*) as n from kinds', [], {}),
    ];
    const expected = await driver.transaction(statements((query, params, options) => driver.query(query, params, options)) as never, { isolationLevel: 'Serializable' });
    const actual = await client.transaction(statements((query, params, options) => client(query, params, options)) as never, { isolationLevel: 'Serializable' });
    expect(actual.map(strip)).toEqual(expected.map(strip));
  });

  it('fails as the driver does: a refused statement with its Postgres fields, a rolled back transaction', async () => {
    const refused = async (run: () => PromiseLike<unknown>) => run().then(() => expect.unreachable('expected a failure'), (error: unknown) => error as Record<string, unknown>);
    const expected = await refused(() => driver.query('insert into kinds (id) values (1)'));
    const actual = await refused(() => client('insert into kinds (id) values (1)'));
    expect(expected).toBeInstanceOf(DriverError);
    expect(actual).toBeInstanceOf(NeonDbError);
    for (const field of ['name', 'message', 'code', 'constraint', 'detail', 'table', 'severity', 'schema']) expect(actual[field]).toEqual(expected[field]);

    const rolledBack = await refused(() => client.transaction([client('insert into kinds (id) values (2)'), client('select 1/0')]));
    expect(rolledBack).toMatchObject({ name: 'NeonDbError', code: '22012' });
    expect(await client('select count(*)::int as n from kinds where id = 2')).toEqual([{ n: 0 }]);
  });

  it('says the endpoint could not be reached, with the cause, as the driver does', async () => {
    const error = await neonHttp('postgres://u:p@127.0.0.1:9/db')('select 1').then(() => undefined, (reason: unknown) => reason as NeonDbError);
    expect(error).toBeInstanceOf(NeonDbError);
    expect(error!.message).toMatch(/^Error connecting to database: /);
    expect(error!.code).toBeUndefined();
    expect(error!.sourceError).toBeDefined();
  });
});

describe('pieces', () => {
  it("posts to Neon's api host, or to a loopback stand-in's own port", () => {
    expect(sqlEndpoint('postgresql://u:p@ep-cool-name-123.us-east-2.aws.neon.tech/neondb?sslmode=require')).toBe('https://api.us-east-2.aws.neon.tech/sql');
    expect(sqlEndpoint('postgres://u:p@127.0.0.1:5433/db')).toBe('http://127.0.0.1:5433/sql');
    expect(sqlEndpoint('postgres://u:p@localhost:6000/db')).toBe('http://localhost:6000/sql');
  });

  it('reads array literals with quotes, escapes, NULL, nesting and bounds', () => {
    expect(parseArrayLiteral('{a,"b c","with \\"quote\\"","back\\\\slash",NULL,"NULL",""}', (text) => text)).toEqual(['a', 'b c', 'with "quote"', 'back\\slash', null, 'NULL', '']);
    expect(parseArrayLiteral('{{1,2},{3,NULL}}', Number)).toEqual([[1, 2], [3, null]]);
    expect(parseArrayLiteral('[0:1]={7,8}', Number)).toEqual([7, 8]);
    expect(parseArrayLiteral('{}', Number)).toEqual([]);
  });
});

/** A result without the driver's private bookkeeping (its parsers, its `viaNeonFetch` flag). */
function strip(result: unknown): unknown {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return result;
  const { rows, fields, rowCount, command, rowAsArray } = result as Record<string, unknown>;
  return { rows, fields, rowCount, command, rowAsArray };
}
