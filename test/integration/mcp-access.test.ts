/**
 * Who may use /mcp, with the official clients of both SDK generations (mcp-fixture.ts): the public
 * tool listing (PUBLIC_TOOL_LIST) that lets a client without a credential list but run nothing,
 * the API key checked before the request is read, and the Origin check that stops DNS rebinding.
 */
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { toolExecutions } from '../../drizzle/schema.ts';
import { tools } from '../../functions/registry.ts';
import logMood from '../../functions/table-tools/log-mood.ts';
import { createGateway } from '../../shared/http/app.ts';
import { withOAuth } from '../../shared/http/oauth.ts';
import { db, send } from './helpers.ts';
import { closeClients, connectWith, expectRefusedWith, gatewayWith, SDKS, type ConnectOptions, type Worker } from './mcp-fixture.ts';

afterEach(closeClients);

describe.each(SDKS)('$name', ({ sdk }) => {
  const connect = (options?: ConnectOptions) => connectWith(sdk, options);
  const expectRefused = (connecting: Promise<unknown>, status: number, code: string) => expectRefusedWith(sdk, connecting, status, code);

  describe('MCP: public listing (PUBLIC_TOOL_LIST)', () => {
    // The deployed gateway (OAuth in front), with the setting on.
    const publicList = (() => {
      const gateway = withOAuth(createGateway(tools));
      return { fetch: (request, env, ctx) => gateway.fetch(request, { ...env, PUBLIC_TOOL_LIST: 'true' }, ctx) } satisfies Worker;
    })();

    it('is off by default: without a credential the client cannot even connect', async () => {
      await expectRefused(connect({ key: null }), 401, 'UNAUTHENTICATED');
    });

    it('on: a client without a credential connects and lists every tool of the URL, but no call runs', async () => {
      const client = await connect({ key: null, worker: publicList });
      expect(client.getServerVersion()).toMatchObject({ name: 'edge-tools' });
      const { tools: listed } = await client.listTools();
      expect(listed.map((tool) => tool.name)).toEqual(tools.map((tool) => tool.id));
      // Other files run beside this one: only executions of this call's input could be this call's.
      const traced = () =>
        db
          .select({ n: sql<number>`count(*)::int` })
          .from(toolExecutions)
          .where(sql`${toolExecutions.input}->>'user_id' = 'public-list'`);
      const before = await traced();
      await expectRefused(
        client.callTool({ name: 'log-mood', arguments: { ...logMood.example, user_id: 'public-list' } }),
        401,
        'UNAUTHENTICATED',
      );
      // Nothing ran: no execution was traced, no row written.
      expect(await traced()).toEqual(before);
      const rows = await db.execute(sql`select count(*)::int as n from mood_entries where user_id = 'public-list'`);
      expect(rows.rows[0]).toEqual({ n: 0 });
    });

    it('on: a toolset URL lists that toolset, and a credential still gets its own list', async () => {
      const client = await connect({ key: null, worker: publicList, url: 'http://edge-tools.test/mcp/study' });
      const { tools: listed } = await client.listTools();
      expect(listed.map((tool) => tool.name)).toEqual(tools.filter((tool) => tool.toolset === 'study').map((tool) => tool.id));
      const keyed = await connect({ worker: publicList });
      expect((await keyed.listTools()).tools).toHaveLength(tools.length);
    });
  });

  describe('MCP: authentication and Origin', () => {
    it.each([
      ['no API key', null],
      ['an unknown API key', 'et_unknown'],
    ])('refuses %s with 401 before reading the request', async (_case, key) => {
      await expectRefused(connect({ key }), 401, 'UNAUTHENTICATED');
    });

    it('says how to authenticate in the 401', async () => {
      const response = await send(
        new Request('http://edge-tools.test/mcp', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: '{}',
        }),
      );
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(await response.json()).toMatchObject({
        success: false,
        error: { code: 'UNAUTHENTICATED', hint: expect.stringContaining('Authorization: Bearer') },
      });
    });

    it('refuses a browser Origin that is not allowed with 403 (DNS-rebinding protection)', async () => {
      await expectRefused(connect({ headers: { origin: 'https://evil.example' } }), 403, 'PERMISSION_DENIED');
    });

    it('accepts origins listed in MCP_ALLOWED_ORIGINS, with CORS headers', async () => {
      const worker = gatewayWith({ MCP_ALLOWED_ORIGINS: 'https://app.example, https://other.example' });
      const client = await connect({ worker, headers: { origin: 'https://app.example' } });
      expect((await client.listTools()).tools.length).toBe(tools.length);
      const preflight = await send(
        new Request('http://edge-tools.test/mcp', {
          method: 'OPTIONS',
          headers: {
            origin: 'https://app.example',
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
          },
        }),
        worker,
      );
      expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
      await expectRefused(connect({ worker, headers: { origin: 'https://evil.example' } }), 403, 'PERMISSION_DENIED');
    });

    it('accepts loopback origins only when the server itself is addressed on loopback (local development)', async () => {
      const headers = { origin: 'http://localhost:6274' };
      const client = await connect({ url: 'http://127.0.0.1:8787/mcp', headers });
      expect((await client.listTools()).tools.length).toBe(tools.length);
      await expectRefused(connect({ url: 'http://edge-tools.test/mcp', headers }), 403, 'PERMISSION_DENIED');
      // A rebinding page is addressed by its own name, even when that name resolves to loopback.
      await expectRefused(
        connect({ url: 'http://rebound.example:8787/mcp', headers: { origin: 'http://rebound.example:8787' } }),
        403,
        'PERMISSION_DENIED',
      );
    });
  });
});
