/**
 * State changes wait for the key to be confirmed, through the gateway in workerd with its default
 * settings (a cached key is re-checked a second after it was verified): with a key revoked or
 * narrowed a moment ago, DELETE /grants and write tools over HTTP and MCP are refused, and nothing
 * is deleted or written.
 */
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiKeys } from '../../drizzle/schema.ts';
import { tools } from '../../functions/registry.ts';
import { createGateway } from '../../shared/http/app.ts';
import { withOAuth } from '../../shared/http/oauth.ts';
import { createKey, createProject, db } from './helpers.ts';
import { DOCUMENT, grantRowOf, MOOD, rowsOf } from './auth-attacks-fixture.ts';
import { connect, ORIGIN, type Json } from './oauth-flow.ts';

let projectId: string;
/** The rows an attack could write in the file's project. */
const rows = () => rowsOf(projectId);

beforeAll(async () => {
  projectId = await createProject('Auth attacks');
}, 60_000);

// Each test runs whole authorizations (several requests each) on a shared, busy machine.
describe('state changes wait for the key to be confirmed', { timeout: 90_000 }, () => {
  // The gateway with its default settings: a cached key is re-checked a second after it was verified.
  const gateway = withOAuth(createGateway(tools));
  /** Past the freshness bound (docs/auth.md): a change a second old reaches every write. */
  const pastBound = () => new Promise((resolve) => setTimeout(resolve, 1_100));
  async function sendTo(request: Request): Promise<Response> {
    const ctx = createExecutionContext();
    const response = await gateway.fetch(request, env, ctx);
    await waitOnExecutionContext(ctx);
    return response;
  }

  it('DELETE /grants and a write tool over HTTP and MCP, with a key revoked a moment ago: refused, nothing deleted or written', async () => {
    const { key, id } = await createKey(projectId);
    const grant = await connect(`${ORIGIN}/mcp/study`, { apiKey: key, toolsets: ['study'] });
    const grantId = (await grantRowOf(grant.clientId)).id;
    // The key is verified and cached by this worker.
    expect((await sendTo(new Request(`${ORIGIN}/grants`, { headers: { authorization: `Bearer ${key}` } }))).status).toBe(200);
    const before = await rows();
    await db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, id));
    await pastBound();
    // The grant's row is what the delete would change: read it straight, not through the revoked key.
    const deleted = await sendTo(
      new Request(`${ORIGIN}/grants/${grantId}`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } }),
    );
    expect(deleted.status).toBe(401);
    expect((await grantRowOf(grant.clientId)).revokedAt).toBeNull();
    // A fresh key (the revoked one is now known to be revoked) for the write tools.
    const second = await createKey(projectId);
    expect(
      (
        await sendTo(
          new Request(`${ORIGIN}/tools/list-plans`, {
            method: 'POST',
            headers: { authorization: `Bearer ${second.key}`, 'content-type': 'application/json' },
            body: '{}',
          }),
        )
      ).status,
    ).toBe(200);
    await db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, second.id));
    await pastBound();
    const http = await sendTo(
      new Request(`${ORIGIN}/tools/log-mood`, {
        method: 'POST',
        headers: { authorization: `Bearer ${second.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(MOOD),
      }),
    );
    expect(http.status).toBe(401);
    // Over MCP: a key verified by a first message, revoked, then a write.
    const third = await createKey(projectId);
    const mcpRequest = (method: string, params: Json) =>
      sendTo(
        new Request(`${ORIGIN}/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${third.key}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-06-18',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        }),
      );
    expect((await mcpRequest('tools/list', {})).status).toBe(200);
    await db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, third.id));
    await pastBound();
    const overMcp = await mcpRequest('tools/call', { name: 'add-document', arguments: DOCUMENT });
    const refusedOverMcp =
      overMcp.status === 401 || ((await overMcp.json()) as Json).result?.structuredContent?.error?.code === 'UNAUTHENTICATED';
    expect(refusedOverMcp).toBe(true);
    expect(await rows()).toEqual(before);
  });

  it('a key narrowed a second ago writes nothing outside its new toolsets', async () => {
    const { key, id } = await createKey(projectId);
    const call = (tool: string, body: unknown) =>
      sendTo(
        new Request(`${ORIGIN}/tools/${tool}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      );
    expect((await call('list-plans', {})).status).toBe(200);
    const before = await rows();
    await db
      .update(apiKeys)
      .set({ toolsets: ['study'] })
      .where(eq(apiKeys.id, id));
    await pastBound();
    const refused = await call('add-document', DOCUMENT);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as Json).error.details.reason).toBe('toolset_not_granted');
    expect((await call('log-mood', MOOD)).status).toBe(403);
    expect(await rows()).toEqual(before);
    // Widened again: judged on the new toolsets once the scope as last verified refuses it (a read, so nothing is written).
    await db.update(apiKeys).set({ toolsets: null }).where(eq(apiKeys.id, id));
    await pastBound();
    expect((await call('semantic-search', { query: 'attack' })).status).toBe(200);
  });
});
