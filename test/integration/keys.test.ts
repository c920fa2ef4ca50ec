/**
 * API keys through the real pipeline in workerd: revocation (however it is done) takes effect on a
 * warm key, guessing is refused cheaply, and nothing about the configuration reaches a caller whose
 * key was not verified.
 *
 * "Without a query" is checked by pointing the worker at a database that cannot be reached
 * (a closed loopback port): any query there would answer 503 DATABASE_ERROR instead.
 */
import { env, exports } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { apiKeys } from '../../drizzle/schema.ts';
import { ok } from '../../shared/core/contract.ts';
import { defineTool, READ_ONLY, type ToolAnnotations } from '../../shared/core/tool.ts';
import { createGateway } from '../../shared/http/app.ts';
import { AUTH_DEFAULTS } from '../../shared/auth/keys.ts';
import type { Env } from '../../shared/runtime/env.ts';
import type { ServeOptions } from '../../shared/http/tool-route.ts';
import { createTenant, db, unknownKey } from './helpers.ts';

const UNREACHABLE_DATABASE = 'postgres://edge:edge@127.0.0.1:9/edge';
const WRITES: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/**
 * A tool that counts its executions. It writes (as far as the gate knows), so it runs only once
 * the key is confirmed; a read would run alongside the key's re-check, its answer withheld.
 */
function countingTool({ annotations = WRITES }: { annotations?: ToolAnnotations } = {}) {
  const state = { executions: 0 };
  const tool = defineTool({
    id: 'count',
    toolset: 'documents',
    title: 'Test tool count',
    annotations,
    description: 'Counts its executions.',
    input: z.strictObject({ n: z.int().min(0).max(10) }),
    output: z.object({ n: z.int() }),
    example: { n: 1 },
    async execute({ n }) {
      state.executions++;
      return ok({ n }, 'Counted.');
    },
  });
  return { tool, state };
}

/** A project with a fresh key, so revoking it disturbs no other test. */
async function freshKey(): Promise<{ key: string; keyId: string }> {
  const { apiKey, keyId } = await createTenant('Keys');
  return { key: apiKey, keyId };
}

type CallOptions = { key?: string | null; address?: string; env?: Partial<Env>; options?: ServeOptions; path?: string; body?: unknown };

async function call(
  tool: ReturnType<typeof countingTool>['tool'],
  { key, address, env: overrides = {}, options = {}, path = '/tools/count', body = { n: 1 } }: CallOptions = {},
) {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (key) headers.authorization = `Bearer ${key}`;
  if (address) headers['cf-connecting-ip'] = address;
  const ctx = createExecutionContext();
  // Each case names the address its requests come from (locally every client is this machine).
  const byHeader = { clientAddress: (request: Request) => request.headers.get('cf-connecting-ip'), ...options };
  const response = await createGateway([tool], byHeader).fetch(
    new Request(`http://edge-tools.test${path}`, { method: 'POST', headers, body: JSON.stringify(body) }),
    { ...env, ...overrides },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, any> };
}

const mcpList = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
const mcpCall = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'count', arguments: { n: 1 } } };

describe('revocation', () => {
  it('a key revoked in the database stops working at its next re-check, over HTTP and MCP, and nothing runs', async () => {
    const { tool, state } = countingTool();
    const { key, keyId } = await freshKey();
    const everyCall = { auth: { recheckAfterMs: 0 } };
    expect((await call(tool, { key, options: everyCall })).status).toBe(200);
    expect((await call(tool, { key, options: everyCall, path: '/mcp', body: mcpList })).status).toBe(200);
    expect(state.executions).toBe(1);

    await db.execute(sql`update api_keys set revoked_at = now() where id = ${keyId}`);
    const http = await call(tool, { key, options: everyCall });
    expect(http.status).toBe(401);
    expect(http.body.error).toMatchObject({ code: 'UNAUTHENTICATED' });
    const list = await call(tool, { key, options: everyCall, path: '/mcp', body: mcpList });
    expect(list.status).toBe(401);
    const mcp = await call(tool, { key, options: everyCall, path: '/mcp', body: mcpCall });
    expect(mcp.status).toBe(401);
    expect(state.executions).toBe(1);
  });

  it('with the default re-check, a warm key is refused once a second has passed since the revocation', async () => {
    const { tool, state } = countingTool();
    const { key, keyId } = await freshKey();
    expect((await call(tool, { key })).status).toBe(200);
    expect((await call(tool, { key })).status).toBe(200); // warm: from the cache
    await db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, keyId));
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const refused = await call(tool, { key });
    expect(refused.status).toBe(401);
    expect(state.executions).toBe(2);
  });

  it('a read of a warm key runs alongside its re-check, and its answer is withheld once the key is revoked', async () => {
    const { tool, state } = countingTool({ annotations: READ_ONLY });
    const { key, keyId } = await freshKey();
    expect((await call(tool, { key })).status).toBe(200);
    await db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, keyId));
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const refused = await call(tool, { key });
    expect(refused.status).toBe(401);
    expect(refused.body).not.toHaveProperty('data');
    expect(state.executions).toBeLessThanOrEqual(2);
  });

  it('a refusal of a warm key for another reason still says 401 once the key is revoked', async () => {
    const { tool } = countingTool();
    const { key, keyId } = await freshKey();
    expect((await call(tool, { key, options: { auth: { recheckAfterMs: 0 } } })).status).toBe(200);
    await db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, keyId));
    const invalid = await call(tool, { key, options: { auth: { recheckAfterMs: 0 } }, body: { n: 99 } });
    expect(invalid.status).toBe(401);
  });
});

describe('guessing keys is cheap to refuse', () => {
  it('refuses a key of the wrong form without a query', async () => {
    const { tool } = countingTool();
    for (const key of ['not-a-key', 'et_short', `et_${'x'.repeat(129)}`, 'et_with space!!!']) {
      const { status, body } = await call(tool, { key, env: { DATABASE_URL: UNREACHABLE_DATABASE } });
      expect(status).toBe(401);
      expect(body.error.code).toBe('UNAUTHENTICATED');
    }
  });

  it('refuses an unknown key seen before without a query', async () => {
    const { tool } = countingTool();
    const unknown = unknownKey();
    expect((await call(tool, { key: unknown })).status).toBe(401);
    const again = await call(tool, { key: unknown, env: { DATABASE_URL: UNREACHABLE_DATABASE } });
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe('UNAUTHENTICATED');
  });

  it('answers 429 with Retry-After, before any query, once an address tried 20 unknown keys; other addresses and known keys go on', async () => {
    const { tool, state } = countingTool();
    const address = `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
    const { key: valid } = await freshKey();
    expect((await call(tool, { key: valid, address })).status).toBe(200);
    // Refusals that cost no query do not count.
    for (let i = 0; i < 25; i++) expect((await call(tool, { key: i % 2 ? null : 'et_short', address })).status).toBe(401);
    for (let i = 0; i < 20; i++) expect((await call(tool, { key: unknownKey(), address })).status).toBe(401);

    const blocked = await call(tool, { key: unknownKey(), address, env: { DATABASE_URL: UNREACHABLE_DATABASE } });
    expect(blocked.status).toBe(429);
    expect(blocked.body.error).toMatchObject({ code: 'RATE_LIMITED', retryable: true, details: { reason: 'failed_authentications' } });
    expect(blocked.body.error.details.retry_after_ms).toBeGreaterThan(0);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);

    const elsewhere = await call(tool, { key: unknownKey(), address: '192.0.2.77' });
    expect(elsewhere.status).toBe(401);
    // A key this isolate verified before is no guess: the block does not stand in its way, even past its cache time.
    expect((await call(tool, { key: valid, address, options: { auth: { recheckAfterMs: 60_000 } } })).status).toBe(200);
    expect((await call(tool, { key: valid, address, options: { auth: { maxStaleMs: 0 } } })).status).toBe(200);
    expect(state.executions).toBe(3);
  });
});

describe('configuration is not told to unverified callers', () => {
  it('without DATABASE_URL, every caller gets the same CONFIG_ERROR, naming nothing', async () => {
    const { tool } = countingTool();
    const { key } = await freshKey();
    const answers = [
      await call(tool, { key, env: { DATABASE_URL: undefined } }),
      await call(tool, { key: null, env: { DATABASE_URL: undefined } }),
    ];
    for (const { status, body } of answers) {
      expect(status).toBe(500);
      expect(body.error.code).toBe('CONFIG_ERROR');
      expect(body.error.details).toBeUndefined();
      expect(JSON.stringify(body)).not.toContain('DATABASE_URL');
    }
  });

  it('a bad variable is a CONFIG_ERROR naming it for a verified key, and a 401 for anyone else', async () => {
    const { tool, state } = countingTool();
    const { key } = await freshKey();
    const anonymous = await call(tool, { key: null, env: { CONCURRENCY_LIMIT: 'ten' } });
    expect(anonymous.status).toBe(401);
    expect(JSON.stringify(anonymous.body)).not.toContain('CONCURRENCY_LIMIT');
    const verified = await call(tool, { key, env: { CONCURRENCY_LIMIT: 'ten' } });
    expect(verified.status).toBe(500);
    expect(verified.body.error).toMatchObject({ code: 'CONFIG_ERROR', details: { variable: 'CONCURRENCY_LIMIT' } });
    expect(state.executions).toBe(0);
  });

  it('a deployed worker without Redis refuses to run, naming the missing variables, unless told it may', async () => {
    const { tool, state } = countingTool();
    const { key } = await freshKey();
    const warm = { auth: { recheckAfterMs: 60_000 } };
    expect((await call(tool, { key, options: warm })).status).toBe(200);
    // A database no local worker would have (192.0.2.1, reserved for documentation): the worker counts as deployed.
    // The key is warm, so it needs no query.
    const deployed = {
      DATABASE_URL: 'postgres://edge:edge@192.0.2.1/edge',
      UPSTASH_REDIS_REST_URL: undefined,
      UPSTASH_REDIS_REST_TOKEN: '',
    };
    const refused = await call(tool, { key, options: warm, env: deployed });
    expect(refused.status).toBe(500);
    expect(refused.body.error).toMatchObject({
      code: 'CONFIG_ERROR',
      details: { reason: 'redis_not_configured', missing_variables: ['UPSTASH_REDIS_REST_URL', 'UPSTASH_REDIS_REST_TOKEN'] },
    });
    expect(state.executions).toBe(1);
    const allowed = await call(tool, { key, options: warm, env: { ...deployed, ALLOW_IN_PROCESS_SEMAPHORE: 'true' } });
    expect(allowed.status).toBe(200);
    expect(state.executions).toBe(2);
  });
});

describe('a key re-check shared by concurrent calls', () => {
  // Each call through the worker's own entrypoint is a request of its own, as on a deployed worker:
  // a request's I/O ends with it unless it is kept alive.
  it('still answers the calls waiting on it when the call that started it has already been answered', async () => {
    const { key } = await freshKey();
    const mcp = (body: unknown) =>
      exports.default.fetch(
        new Request('http://edge-tools.test/mcp', {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify(body),
        }),
      );
    expect((await mcp(mcpList)).status).toBe(200);
    // Past the re-check interval, the next call starts a re-check of the key; this one is answered
    // at once (the MCP SDK refuses its arguments) while the re-check is still under way.
    await new Promise((resolve) => setTimeout(resolve, AUTH_DEFAULTS.recheckAfterMs + 100));
    await (await mcp({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list-plans', arguments: 5 } })).text();
    // Before, the re-check died with that call, and every call of the key waited on it (holding
    // execution slots) until the key's cache entry expired a minute later. The ceiling is a third of
    // that wait, so a busy machine's slowness never fails the test while the old hang still would.
    const noAnswer = new Promise<'no answer'>((resolve) => setTimeout(() => resolve('no answer'), 20_000));
    const later = await Promise.race([mcp(mcpList).then((response) => response.status), noAnswer]);
    expect(later).toBe(200);
  }, 45_000);
});

describe('each request authorises once', () => {
  // With `maxStaleMs: 0` every authorisation looks the key up in the database. The worker's
  // database goes through the fault proxy, which counts the lookups it received.
  const DATABASE = 'authorize-once';
  const counted = { DATABASE_URL: env.TEST_SERVICES.faultyDatabaseUrl.replace(/\/[^/]*$/, `/${DATABASE}`) };
  const everyLookup = { auth: { maxStaleMs: 0 } };
  const lookups = async () => {
    const url = new URL('/__seen', env.TEST_SERVICES.faultControlUrl);
    url.search = new URLSearchParams({ database: DATABASE, match: 'from "api_keys"' }).toString();
    return ((await (await fetch(url)).json()) as { seen: number }).seen;
  };

  it('a tool call over HTTP looks its key up once, and runs', async () => {
    const { tool, state } = countingTool();
    const { key } = await freshKey();
    const before = await lookups();
    const answer = await call(tool, { key, options: everyLookup, env: counted });
    expect(answer.status).toBe(200);
    expect(state.executions).toBe(1);
    expect((await lookups()) - before).toBe(1);
  });

  it('a tool call over MCP looks its key up once, and runs', async () => {
    const { tool, state } = countingTool();
    const { key } = await freshKey();
    const before = await lookups();
    const answer = await call(tool, { key, options: everyLookup, env: counted, path: '/mcp', body: mcpCall });
    expect(answer.status).toBe(200);
    expect(answer.body.result).toMatchObject({ isError: false, structuredContent: { success: true, data: { n: 1 } } });
    expect(state.executions).toBe(1);
    expect((await lookups()) - before).toBe(1);
  });
});
