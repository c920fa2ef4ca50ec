/**
 * createDb's signal, and withQuerySignal's, reach the Neon driver's fetch: aborting one cuts a
 * query in flight (here one the server never answers), and the driver's own headers survive (the
 * query is still understood). withQuerySignal binds only the work it runs: the same client's
 * queries outside it are not aborted.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../shared/runtime/db.ts';
import { withQuerySignal } from '../../shared/runtime/query-signal.ts';

let url: string;
const received: IncomingHttpHeaders[] = [];
/** Resolved when the server has read a query it will never answer. */
let hanging = Promise.withResolvers<void>();
// Answers `select 1` at once; anything else never.
const server = createServer((request, response) => {
  received.push(request.headers);
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk));
  request.on('end', () => {
    if (!body.includes('select 1')) return hanging.resolve();
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({ fields: [{ name: 'one', dataTypeID: 23 }], rows: [['1']], command: 'SELECT', rowCount: 1, rowAsArray: true }),
    );
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `postgres://edge:edge@127.0.0.1:${(server.address() as AddressInfo).port}/edge`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('createDb({ signal })', () => {
  it('keeps the driver working: headers intact, answers read', async () => {
    const controller = new AbortController();
    const { rows } = await createDb(url, { signal: controller.signal }).execute(sql`select 1`);
    expect(rows).toEqual([{ one: 1 }]);
    expect(received.at(-1)!['neon-connection-string']).toContain(url.slice('postgres://'.length));
  });

  it('aborts a query in flight with the signal’s reason', async () => {
    hanging = Promise.withResolvers<void>();
    const controller = new AbortController();
    const query = createDb(url, { signal: controller.signal }).execute(sql`select pg_sleep(3600)`);
    const settled = query.then(
      () => 'answered',
      (error: Error) => String(error.cause ?? error),
    );
    await hanging.promise; // the request is in flight
    controller.abort(new Error('slot lost'));
    expect(await settled).toMatch(/slot lost/);
  });
});

describe('withQuerySignal', () => {
  it("aborts the queries of the work it runs, and not the same client's queries after it", async () => {
    hanging = Promise.withResolvers<void>();
    const db = createDb(url);
    const controller = new AbortController();
    const query = withQuerySignal(controller.signal, async () => {
      await db.execute(sql`select 1`); // answered: the signal is not aborted yet
      return db.execute(sql`select pg_sleep(3600)`);
    });
    const settled = query.then(
      () => 'answered',
      (error: Error) => String(error.cause ?? error),
    );
    await hanging.promise;
    controller.abort(new Error('caller went away'));
    expect(await settled).toMatch(/caller went away/);
    // The same client, outside the work (as the trace is written after the answer), still answers.
    expect((await db.execute(sql`select 1`)).rows).toEqual([{ one: 1 }]);
  });

  it('keeps the context of each work apart: aborting one leaves the other running', async () => {
    hanging = Promise.withResolvers<void>();
    const db = createDb(url);
    const [first, second] = [new AbortController(), new AbortController()];
    const aborted = withQuerySignal(first.signal, () => db.execute(sql`select pg_sleep(3600)`)).then(
      () => 'answered',
      (error: Error) => String(error.cause ?? error),
    );
    await hanging.promise;
    const other = withQuerySignal(second.signal, () => db.execute(sql`select 1`));
    first.abort(new Error('first caller went away'));
    expect(await aborted).toMatch(/first caller went away/);
    expect((await other).rows).toEqual([{ one: 1 }]);
  });
});
