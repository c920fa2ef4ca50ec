/**
 * The fault proxy's scripts, against a plain HTTP target that counts what reaches it: faults before
 * forwarding never reach the target, faults after forwarding reach it and lose the answer, `match`
 * picks queries by their SQL, scripts of one database name leave the others alone, and a held
 * query is answered never and counted once its client gives up.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startFaultProxy, type FaultProxy, type FaultScript } from '../../local/fault-proxy.ts';

let target: Server;
let proxy: FaultProxy;
let received: string[] = [];

beforeAll(async () => {
  target = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push((JSON.parse(body) as { query: string }).query);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ rows: [], rowCount: 1 }));
    });
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  proxy = await startFaultProxy(`http://127.0.0.1:${(target.address() as AddressInfo).port}`);
});

afterAll(async () => {
  await proxy.close();
  target.closeAllConnections();
  await new Promise((resolve) => target.close(resolve));
});

beforeEach(() => {
  received = [];
});

async function script(faults: FaultScript | FaultScript[]): Promise<void> {
  const response = await fetch(`${proxy.url}/__faults`, { method: 'POST', body: JSON.stringify(faults) });
  expect(response.status).toBe(200);
}

/** Sends one query as the Neon driver does; answers the status, or 'reset' when the connection dropped. */
async function query(sql: string, database = 'edge'): Promise<number | 'reset'> {
  try {
    const response = await fetch(`${proxy.url}/sql`, {
      method: 'POST',
      headers: { 'neon-connection-string': `postgres://edge:edge@127.0.0.1:5432/${database}?application_name=test` },
      body: JSON.stringify({ query: sql, params: [] }),
    });
    await response.text();
    return response.status;
  } catch {
    return 'reset';
  }
}

describe('fault proxy', () => {
  it('fails before forwarding: the target never sees the query', async () => {
    await script({ count: 1, fault: 'unavailable', database: 'before' });
    expect(await query('insert into t values (1)', 'before')).toBe(503);
    expect(received).toEqual([]);
    expect(await query('insert into t values (2)', 'before')).toBe(200);
    expect(received).toEqual(['insert into t values (2)']);
  });

  it('fails after forwarding: the target ran the query, the client lost the answer', async () => {
    await script({ count: 1, fault: 'connection_reset', when: 'after', database: 'after' });
    expect(await query('insert into t values (1)', 'after')).toBe('reset');
    expect(received).toEqual(['insert into t values (1)']);
    await script({ count: 1, fault: 'unavailable', when: 'after', database: 'after' });
    expect(await query('insert into t values (2)', 'after')).toBe(503);
    expect(received).toEqual(['insert into t values (1)', 'insert into t values (2)']);
  });

  it('counts only the queries that match, whitespace and case aside', async () => {
    await script({ count: 1, fault: 'unavailable', when: 'after', match: 'INSERT INTO documents', database: 'match' });
    expect(await query('select 1', 'match')).toBe(200);
    expect(await query('insert   into\n  documents (id) values (1)', 'match')).toBe(503);
    expect(await query('insert into documents (id) values (2)', 'match')).toBe(200);
    expect(received).toHaveLength(3);
  });

  it('keeps scripts per database name', async () => {
    await script({ count: 1, fault: 'unavailable', database: 'one' });
    expect(await query('select 1', 'two')).toBe(200);
    expect(await query('select 1', 'one')).toBe(503);
  });

  it('holds a hanging query unanswered until its client gives up, and counts it abandoned', async () => {
    await script({ count: 1, fault: 'hang', match: 'pg_sleep', database: 'held' });
    const seen = async () =>
      (await (await fetch(`${proxy.url}/__seen?match=pg_sleep&database=held`)).json()) as { seen: number; abandoned: number };
    const controller = new AbortController();
    const held = fetch(`${proxy.url}/sql`, {
      method: 'POST',
      headers: { 'neon-connection-string': 'postgres://edge:edge@127.0.0.1:5432/held' },
      body: JSON.stringify({ query: 'select pg_sleep(3600)', params: [] }),
      signal: controller.signal,
    }).then(
      () => 'answered',
      () => 'aborted',
    );
    await vi.waitFor(async () => expect(await seen()).toEqual({ seen: 1, abandoned: 0 }), { timeout: 20_000, interval: 20 });
    expect(received).toEqual([]);
    controller.abort();
    expect(await held).toBe('aborted');
    await vi.waitFor(async () => expect(await seen()).toEqual({ seen: 1, abandoned: 1 }), { timeout: 20_000, interval: 20 });
    // The next one, past the script's count, is forwarded.
    expect(await query('select pg_sleep(0)', 'held')).toBe(200);
  });

  it('runs a list of scripts in turn: an answer lost after its commit, then the database unreachable for the next queries', async () => {
    await script([
      { count: 1, fault: 'connection_reset', when: 'after', match: 'insert into documents', database: 'list' },
      { count: 2, fault: 'connection_reset', database: 'list' },
    ]);
    expect(await query('select 1', 'list')).toBe(200);
    expect(await query('insert into documents (id) values (1)', 'list')).toBe('reset');
    expect(await query('select 2', 'list')).toBe('reset');
    expect(await query('insert into documents (id) values (1)', 'list')).toBe('reset');
    expect(await query('select 3', 'list')).toBe(200);
    // Only the queries the database ran reached it: the first, the one whose answer was lost, the last.
    expect(received).toEqual(['select 1', 'insert into documents (id) values (1)', 'select 3']);
  });

  it('replaces what was scripted before, and clears it with a count of 0', async () => {
    await script({ count: 5, fault: 'unavailable', database: 'replace' });
    await script({ count: 1, fault: 'permission_denied', database: 'replace' });
    expect(await query('select 1', 'replace')).toBe(400);
    expect(await query('select 2', 'replace')).toBe(200);
    await script({ count: 5, fault: 'unavailable', database: 'replace' });
    await script({ count: 0, fault: 'unavailable', database: 'replace' });
    expect(await query('select 3', 'replace')).toBe(200);
  });

  it('refuses a list whose scripts name different databases', async () => {
    const response = await fetch(`${proxy.url}/__faults`, {
      method: 'POST',
      body: JSON.stringify([
        { count: 1, fault: 'unavailable', database: 'a' },
        { count: 1, fault: 'unavailable', database: 'b' },
      ]),
    });
    expect(response.status).toBe(400);
  });

  it('refuses an unknown fault', async () => {
    const response = await fetch(`${proxy.url}/__faults`, { method: 'POST', body: JSON.stringify({ count: 1, fault: 'meteor' }) });
    expect(response.status).toBe(400);
  });
});
