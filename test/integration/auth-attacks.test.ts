/**
 * Attacks on scoped access, through the real gateway in workerd (OAuth on an https origin, as
 * deployed), each counted in rows (what was written, which grants are live) and in what the
 * credential can list and call. Nothing tried here may be accepted, and nothing may be written:
 * - a key limited to a toolset approving a wider grant; a key narrowed, or revoked, after approving;
 *   a grant revoked while calls run;
 * - a token for /mcp/study on every other resource and route;
 * - every spelling of a toolset URL through the whole OAuth flow;
 * - state-changing routes with a key revoked a moment ago;
 * - refresh-token replay, framing of the consent pages, registration without bounds, a
 *   misconfigured token lifetime, and bearer tokens that are no token.
 */
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { and, count, eq, isNull } from 'drizzle-orm';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { apiKeys, documents, moodEntries, oauthGrants } from '../../drizzle/schema.ts';
import { tools } from '../../functions/registry.ts';
import { createGateway } from '../../shared/http/app.ts';
import { withOAuth } from '../../shared/http/oauth.ts';
import { createKey, createProject, db, send, unknownKey } from './helpers.ts';
import {
  connect,
  exchangeCode,
  fetchJson,
  mcp,
  openConsent,
  ORIGIN,
  pkce,
  postConsent,
  REDIRECT,
  register,
  tokenRequest,
  type Json,
} from './oauth-flow.ts';

const DOCUMENT = { title: 'Attack', content: '# Attack\n- [ ] must never be written\n' };
const MOOD = { user_id: 'attacker', mood: 'happy', energy_level: 7, timestamp: '2031-01-01T00:00:00Z' };
const STUDY_TOOL = 'list-plans';

let projectId: string;

/** The rows an attack could write: documents, mood entries, and live grants of the project. */
async function rows(): Promise<{ documents: number; moods: number; liveGrants: number }> {
  const [d] = await db.select({ n: count() }).from(documents).where(eq(documents.projectId, projectId));
  const [m] = await db.select({ n: count() }).from(moodEntries).where(eq(moodEntries.projectId, projectId));
  const [g] = await db
    .select({ n: count() })
    .from(oauthGrants)
    .where(and(eq(oauthGrants.projectId, projectId), isNull(oauthGrants.revokedAt)));
  return { documents: d!.n, moods: m!.n, liveGrants: g!.n };
}

/** The tools a token lists on an MCP path (undefined when it is refused there), and the status. */
async function listed(path: string, token: string): Promise<{ status: number; names?: string[] }> {
  const answer = await mcp(path, token, 'tools/list');
  return { status: answer.status, names: answer.body.result?.tools?.map((tool: { name: string }) => tool.name) };
}

/** Calls a tool over MCP; the envelope (or the HTTP status when the request itself is refused). */
async function callOverMcp(path: string, token: string, name: string, args: Json): Promise<{ status: number; envelope?: Json }> {
  const answer = await mcp(path, token, 'tools/call', { name, arguments: args });
  return { status: answer.status, envelope: answer.body.result?.structuredContent };
}

async function grantRowOf(clientId: string) {
  const [row] = await db.select().from(oauthGrants).where(eq(oauthGrants.clientId, clientId));
  return row!;
}

beforeAll(async () => {
  projectId = await createProject('Auth attacks');
}, 60_000);

// Each test runs whole authorizations (several requests each) on a shared, busy machine.
describe('a grant never reaches further than the key that approved it', { timeout: 90_000 }, () => {
  it('a key limited to study cannot approve documents, table-tools or write beyond it: the form is narrowed to the key and says so', async () => {
    const { key } = await createKey(projectId, { toolsets: ['study'] });
    const before = await rows();
    const { clientId } = await register();
    const { verifier, challenge } = await pkce();
    const consent = await openConsent({ clientId, resource: `${ORIGIN}/mcp`, challenge });
    // Every toolset is offered while the key is unknown.
    expect(consent.html).toContain('value="documents"');
    const wider = await postConsent(consent.cookie, {
      ...consent.fields,
      toolset: ['documents', 'table-tools', 'study'],
      access: 'write',
      api_key: key,
      decision: 'approve',
    });
    expect(wider.status).toBe(400);
    expect(wider.headers.get('location')).toBeNull();
    const page = await wider.text();
    expect(page).toContain('may grant only study');
    expect(page).toContain('value="study"');
    expect(page).not.toContain('value="documents"');
    expect(page).not.toContain('value="table-tools"');
    expect(await rows()).toEqual(before);

    // Approved again within the key: a grant of study only.
    const approved = await postConsent(consent.cookie, {
      ...consent.fields,
      toolset: 'study',
      access: 'write',
      api_key: key,
      decision: 'approve',
    });
    expect(approved.status).toBe(302);
    const code = new URL(approved.headers.get('location')!).searchParams.get('code')!;
    const tokens = await exchangeCode({ clientId, code, verifier, resource: `${ORIGIN}/mcp` });
    expect(tokens.body.scope).toBe('study:read study:write');
    expect((await grantRowOf(clientId)).toolsets).toEqual(['study']);
    const { names } = await listed('/mcp', tokens.body.access_token);
    expect(names).toContain(STUDY_TOOL);
    expect(names).not.toContain('add-document');
    expect(names).not.toContain('log-mood');
    for (const [name, args] of [
      ['add-document', DOCUMENT],
      ['log-mood', MOOD],
    ] as const) {
      const refused = await callOverMcp('/mcp', tokens.body.access_token, name, args);
      expect(refused.envelope, name).toMatchObject({ success: false, error: { code: 'PERMISSION_DENIED' } });
    }

    // A grant row wider than its key (as recorded before grants were bounded) still reaches only the
    // key's toolsets. The row is made read-only too, so that the listing shows when the grant was read again.
    await db
      .update(oauthGrants)
      .set({ toolsets: ['documents', 'task-analysis', 'table-tools', 'study'], readOnly: true })
      .where(eq(oauthGrants.clientId, clientId));
    await vi.waitFor(async () => expect((await listed('/mcp', tokens.body.access_token)).names).not.toContain('create-flashcard'), {
      timeout: 5_000,
      interval: 100,
    });
    const widened = (await listed('/mcp', tokens.body.access_token)).names!;
    expect(widened).toContain(STUDY_TOOL);
    expect(widened).not.toContain('semantic-search');
    expect(widened).not.toContain('add-document');
    const outside = await callOverMcp('/mcp', tokens.body.access_token, 'semantic-search', { query: 'attack' });
    expect(outside.envelope).toMatchObject({
      success: false,
      error: { code: 'PERMISSION_DENIED', details: { reason: 'toolset_not_granted' } },
    });
    expect(await rows()).toEqual({ ...before, liveGrants: before.liveGrants + 1 });
  });

  it('a key narrowed after approving narrows its grant within about a second; narrowed to nothing, the grant reaches nothing', async () => {
    const { key, id } = await createKey(projectId);
    const before = await rows();
    const grant = await connect(`${ORIGIN}/mcp`, { apiKey: key, toolsets: ['documents', 'study'] });
    expect((await listed('/mcp', grant.accessToken)).names).toContain('add-document');
    await db
      .update(apiKeys)
      .set({ toolsets: ['study'] })
      .where(eq(apiKeys.id, id));
    await vi.waitFor(async () => expect((await listed('/mcp', grant.accessToken)).names).not.toContain('add-document'), {
      timeout: 5_000,
      interval: 100,
    });
    expect((await listed('/mcp', grant.accessToken)).names).toContain(STUDY_TOOL);
    expect((await callOverMcp('/mcp', grant.accessToken, 'add-document', DOCUMENT)).envelope).toMatchObject({
      error: { code: 'PERMISSION_DENIED', details: { reason: 'toolset_not_granted' } },
    });

    await db
      .update(apiKeys)
      .set({ toolsets: ['table-tools'] })
      .where(eq(apiKeys.id, id));
    await vi.waitFor(async () => expect((await mcp('/mcp', grant.accessToken, 'tools/list')).status).toBe(403), {
      timeout: 5_000,
      interval: 100,
    });
    const refused = await mcp('/mcp', grant.accessToken, 'tools/list');
    expect(refused.body.error).toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'approving_key_narrowed' } });
    expect((await callOverMcp('/mcp', grant.accessToken, 'log-mood', MOOD)).status).toBe(403);
    expect(await rows()).toEqual({ ...before, liveGrants: before.liveGrants + 1 });
  });

  it('a key revoked after approving stops its access tokens and its refresh token', async () => {
    const { key, id } = await createKey(projectId);
    const before = await rows();
    const grant = await connect(`${ORIGIN}/mcp/study`, { apiKey: key, toolsets: ['study'] });
    expect((await listed('/mcp/study', grant.accessToken)).status).toBe(200);
    await db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, id));
    await vi.waitFor(async () => expect((await listed('/mcp/study', grant.accessToken)).status).toBe(401), {
      timeout: 5_000,
      interval: 100,
    });
    const refresh = await tokenRequest({ grant_type: 'refresh_token', refresh_token: grant.refreshToken, client_id: grant.clientId });
    expect(refresh).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(refresh.body.access_token).toBeUndefined();
    expect((await callOverMcp('/mcp/study', grant.accessToken, 'create-flashcard', { front: 'a', back: 'b' })).status).toBe(401);
    expect(await rows()).toEqual({ ...before, liveGrants: before.liveGrants + 1 });
  });

  it('a grant revoked while calls run: every call the revocation did not precede is refused, and only accepted calls wrote', async () => {
    const { key } = await createKey(projectId);
    const grant = await connect(`${ORIGIN}/mcp/documents`, { apiKey: key, toolsets: ['documents'] });
    const before = await rows();
    const { grant_id } = { grant_id: (await grantRowOf(grant.clientId)).id };
    const calls = Array.from({ length: 4 }, (_, i) =>
      callOverMcp('/mcp/documents', grant.accessToken, 'add-document', { ...DOCUMENT, title: `Racing ${i}` }),
    );
    const revoked = send(new Request(`${ORIGIN}/grants/${grant_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } }));
    const answers = await Promise.all(calls);
    expect((await revoked).status).toBe(200);
    const accepted = answers.filter((answer) => answer.envelope?.success === true).length;
    expect((await rows()).documents).toBe(before.documents + accepted);
    await vi.waitFor(async () => expect((await listed('/mcp/documents', grant.accessToken)).status).toBe(401), {
      timeout: 5_000,
      interval: 100,
    });
    expect((await callOverMcp('/mcp/documents', grant.accessToken, 'add-document', DOCUMENT)).status).toBe(401);
    expect(
      (await tokenRequest({ grant_type: 'refresh_token', refresh_token: grant.refreshToken, client_id: grant.clientId })).body.error,
    ).toBe('invalid_grant');
    expect((await rows()).documents).toBe(before.documents + accepted);
  });
});

describe('a token works on its resource only', { timeout: 90_000 }, () => {
  it('a token for /mcp/study is refused on /mcp, /mcp/documents, the tool routes, the listings, the read routes and /grants', async () => {
    const { key } = await createKey(projectId);
    const grant = await connect(`${ORIGIN}/mcp/study`, { apiKey: key, toolsets: ['study'] });
    const before = await rows();
    const bearer = { authorization: `Bearer ${grant.accessToken}` };
    const mcpHeaders = { ...bearer, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const attempts: [string, RequestInit][] = [
      ['/mcp', { method: 'POST', headers: mcpHeaders, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) }],
      ['/mcp/documents', { method: 'POST', headers: mcpHeaders, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) }],
      [
        '/mcp/study,documents',
        { method: 'POST', headers: mcpHeaders, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) },
      ],
      [
        '/tools/add-document',
        { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: JSON.stringify(DOCUMENT) },
      ],
      ['/tools/list-plans', { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: '{}' }],
      ['/tools', { headers: bearer }],
      ['/openapi.json', { headers: bearer }],
      ['/executions', { headers: bearer }],
      ['/metrics', { headers: bearer }],
      ['/grants', { headers: bearer }],
      [`/grants/${(await grantRowOf(grant.clientId)).id}`, { method: 'DELETE', headers: bearer }],
    ];
    for (const [path, init] of attempts) {
      const refused = await send(new Request(ORIGIN + path, init));
      expect(refused.status, path).toBe(401);
      expect(refused.headers.get('www-authenticate'), path).toContain('error="invalid_token"');
    }
    expect(await rows()).toEqual(before);
    // On its own URL it works.
    expect((await listed('/mcp/study', grant.accessToken)).names).toContain(STUDY_TOOL);
  });

  it('a token for the HTTP API works on every route the README names (listings included), and /grants refuses it as an OAuth token', async () => {
    const { key } = await createKey(projectId);
    const grant = await connect(ORIGIN, { apiKey: key, toolsets: ['study'] });
    const bearer = { authorization: `Bearer ${grant.accessToken}` };
    for (const path of ['/tools', '/openapi.json', '/executions', '/metrics']) {
      expect((await send(new Request(ORIGIN + path, { headers: bearer }))).status, path).toBe(200);
    }
    const catalog = await fetchJson('/tools', { headers: bearer });
    expect(catalog.body.data.tools.map((tool: { id: string }) => tool.id)).toContain(STUDY_TOOL);
    expect(catalog.body.data.tools.map((tool: { id: string }) => tool.id)).not.toContain('add-document');
    expect(
      (await fetchJson('/tools/list-plans', { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: '{}' }))
        .body.success,
    ).toBe(true);
    const grants = await fetchJson('/grants', { headers: bearer });
    expect(grants.status).toBe(403);
    expect(grants.body.error).toMatchObject({ details: { reason: 'api_key_required', credential: 'oauth' } });
  });

  it('a key limited to toolsets is refused on /grants as a limited key, never called an OAuth token', async () => {
    const { key } = await createKey(projectId, { toolsets: ['study'] });
    for (const request of [
      new Request(`${ORIGIN}/grants`, { headers: { authorization: `Bearer ${key}` } }),
      new Request(`${ORIGIN}/grants/${crypto.randomUUID()}`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } }),
    ]) {
      const refused = await send(request);
      const body = (await refused.json()) as Json;
      expect(refused.status).toBe(403);
      expect(body.error.details).toMatchObject({ reason: 'full_api_key_required', credential: 'api_key' });
      expect(body.error.message).not.toMatch(/OAuth/i);
    }
  });
});

describe('every spelling of a toolset URL is one resource', { timeout: 180_000 }, () => {
  it('through discovery, consent, tokens and calls: the token works on the URL the person pasted', async () => {
    const { key } = await createKey(projectId);
    for (const [pasted, toolset, tool] of [
      ['/mcp/Study', 'study', STUDY_TOOL],
      ['/mcp/study/', 'study', STUDY_TOOL],
      ['/mcp/STUDY', 'study', STUDY_TOOL],
      ['/mcp/task_analysis', 'task-analysis', 'semantic-search'],
    ] as const) {
      const before = await rows();
      // Discovery from the 401 on the pasted URL.
      const challenge = (
        await send(new Request(ORIGIN + pasted, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }))
      ).headers.get('www-authenticate')!;
      const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)![1]!;
      expect(challenge, pasted).toContain(`scope="${toolset}:read ${toolset}:write"`);
      const metadata = (await fetchJson(metadataUrl.slice(ORIGIN.length))).body;
      // An MCP client checks that the resource is the URL it was given (up to a trailing slash).
      expect(metadata.resource, pasted).toBe(ORIGIN + pasted.replace(/\/$/, ''));
      expect(metadata.scopes_supported, pasted).toEqual([`${toolset}:read`, `${toolset}:write`]);
      // Consent offers that toolset only; the token is bound to the canonical resource.
      const { clientId } = await register();
      const { verifier, challenge: pkceChallenge } = await pkce();
      const consent = await openConsent({ clientId, resource: metadata.resource, challenge: pkceChallenge });
      expect(consent.response.status, pasted).toBe(200);
      expect(
        [...consent.html.matchAll(/name="toolset" value="([^"]+)"/g)].map((match) => match[1]),
        pasted,
      ).toEqual([toolset]);
      const approved = await postConsent(consent.cookie, {
        ...consent.fields,
        toolset,
        access: 'write',
        api_key: key,
        decision: 'approve',
      });
      expect(approved.status, pasted).toBe(302);
      const code = new URL(approved.headers.get('location')!).searchParams.get('code')!;
      const tokens = await exchangeCode({ clientId, code, verifier, resource: metadata.resource });
      expect(tokens.status, pasted).toBe(200);
      expect((await grantRowOf(clientId)).resource).toBe(`${ORIGIN}/mcp/${toolset}`);
      // It works on the pasted URL and on every other spelling, and nowhere else.
      expect((await listed(pasted, tokens.body.access_token)).names, pasted).toContain(tool);
      expect((await listed(`/mcp/${toolset}`, tokens.body.access_token)).status, pasted).toBe(200);
      expect((await listed('/mcp/documents', tokens.body.access_token)).status, pasted).toBe(401);
      expect((await listed('/mcp', tokens.body.access_token)).status, pasted).toBe(401);
      // A refresh names the pasted spelling too.
      const refreshed = await tokenRequest({
        grant_type: 'refresh_token',
        refresh_token: tokens.body.refresh_token,
        client_id: clientId,
        resource: metadata.resource,
      });
      expect(refreshed.status, pasted).toBe(200);
      expect((await listed(pasted, refreshed.body.access_token)).status, pasted).toBe(200);
      expect(await rows(), pasted).toEqual({ ...before, liveGrants: before.liveGrants + 1 });
    }
  });
});

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

describe('OAuth hygiene', { timeout: 90_000 }, () => {
  it('a replayed refresh token revokes the whole grant: neither the thief nor the client keeps anything', async () => {
    const { key } = await createKey(projectId);
    const before = await rows();
    const grant = await connect(`${ORIGIN}/mcp/study`, { apiKey: key, toolsets: ['study'] });
    const rotated = await tokenRequest({ grant_type: 'refresh_token', refresh_token: grant.refreshToken, client_id: grant.clientId });
    expect(rotated.status).toBe(200);
    // The stolen copy of the first refresh token, replayed once (the provider alone would still honour it).
    const replay = await tokenRequest({ grant_type: 'refresh_token', refresh_token: grant.refreshToken, client_id: grant.clientId });
    expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(replay.body.access_token).toBeUndefined();
    for (const token of [grant.accessToken, rotated.body.access_token]) expect((await listed('/mcp/study', token)).status).toBe(401);
    expect(
      (await tokenRequest({ grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token, client_id: grant.clientId })).body
        .error,
    ).toBe('invalid_grant');
    expect(await rows()).toEqual(before);
  });

  it('no page /authorize serves may be framed: the form, the form again after a wrong key, and an error page', async () => {
    const { clientId } = await register();
    const { challenge } = await pkce();
    const consent = await openConsent({ clientId, challenge });
    const wrongKey = await postConsent(consent.cookie, {
      ...consent.fields,
      toolset: 'study',
      access: 'write',
      api_key: unknownKey(),
      decision: 'approve',
    });
    expect(wrongKey.status).toBe(400);
    const badRedirect = await send(
      new Request(
        `${ORIGIN}/authorize?response_type=code&client_id=${clientId}&redirect_uri=${encodeURIComponent('https://evil.example/cb')}&code_challenge=${challenge}&code_challenge_method=S256`,
      ),
    );
    expect(badRedirect.status).toBe(400);
    for (const [name, response] of [
      ['form', consent.response],
      ['form after a wrong key', wrongKey],
      ['error page', badRedirect],
    ] as const) {
      expect(response.headers.get('x-frame-options'), name).toBe('DENY');
      expect(response.headers.get('content-security-policy'), name).toContain("frame-ancestors 'none'");
    }
  });

  it('registration is bounded: a long name, many or long redirect URIs, an oversized body, and too many registrations from one address', async () => {
    const clients = async () => (await env.OAUTH_KV.list({ prefix: 'client:' })).keys.length;
    const before = await clients();
    const registration = (metadata: Json, address = '198.51.100.7') =>
      fetchJson('/oauth/register', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'cf-connecting-ip': address },
        body: JSON.stringify({ client_name: 'Bounded', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', ...metadata }),
      });
    for (const [what, metadata, error] of [
      ['a 100 KB name', { client_name: 'x'.repeat(100_000) }, 'invalid_client_metadata'],
      [
        '1,000 redirect URIs',
        { redirect_uris: Array.from({ length: 1_000 }, (_, i) => `https://agent.example/cb/${i}`) },
        'invalid_client_metadata',
      ],
      [
        '11 redirect URIs',
        { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://agent.example/cb/${i}`) },
        'invalid_redirect_uri',
      ],
      ['a 5,000-character redirect URI', { redirect_uris: [`https://agent.example/${'a'.repeat(5_000)}`] }, 'invalid_redirect_uri'],
      ['a 5,000-character client_uri', { client_uri: `https://agent.example/${'a'.repeat(5_000)}` }, 'invalid_client_metadata'],
    ] as const) {
      const refused = await registration(metadata);
      expect(refused.status, what).toBe(400);
      expect(refused.body.error, what).toBe(error);
      expect(refused.body.error_description, what).toMatch(/at most/);
    }
    expect(await clients()).toBe(before);
    // 20 registrations an hour per address; the 21st is refused, and other addresses are not.
    const address = `203.0.113.${Math.floor(Math.random() * 200) + 1}`;
    for (let i = 0; i < 20; i++) expect((await registration({}, address)).status).toBe(201);
    const limited = await registration({}, address);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await clients()).toBe(before + 20);
    expect((await registration({}, '192.0.2.99')).status).toBe(201);
  });

  it('a misconfigured access-token lifetime answers 503 on the OAuth endpoints, never 500; API keys keep working, other bearers get 401', async () => {
    const gateway = withOAuth(createGateway(tools));
    const { key } = await createKey(projectId);
    for (const ttl of ['30', 'an hour', '-5', '1e3']) {
      const misconfigured = { ...env, OAUTH_ACCESS_TOKEN_TTL_SECONDS: ttl };
      const sendWith = async (request: Request) => {
        const ctx = createExecutionContext();
        const response = await gateway.fetch(request, misconfigured, ctx);
        await waitOnExecutionContext(ctx);
        return response;
      };
      for (const request of [
        new Request(`${ORIGIN}/.well-known/oauth-authorization-server`),
        new Request(`${ORIGIN}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=refresh_token&refresh_token=a:b:c&client_id=x',
        }),
        new Request(`${ORIGIN}/authorize?response_type=code&client_id=x`),
      ]) {
        const response = await sendWith(request);
        expect(response.status, `${ttl} ${request.url}`).toBe(503);
        expect(((await response.json()) as Json).error_description).toContain('CONFIG_ERROR');
      }
      const bearer = await sendWith(
        new Request(`${ORIGIN}/mcp/study`, {
          method: 'POST',
          headers: { authorization: 'Bearer a:b:c', 'content-type': 'application/json' },
          body: '{}',
        }),
      );
      expect(bearer.status, ttl).toBe(401);
      expect(bearer.headers.get('www-authenticate'), ttl).toContain('resource_metadata=');
      expect(
        (
          await sendWith(
            new Request(`${ORIGIN}/tools/list-plans`, {
              method: 'POST',
              headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
              body: '{}',
            }),
          )
        ).status,
        ttl,
      ).toBe(200);
    }
  });

  it('bearer tokens that are no token of ours get 401 with a challenge on /mcp, never 500', async () => {
    for (const token of ['x', 'a:b:c', `${crypto.randomUUID()}:${crypto.randomUUID()}:secret`, 'y'.repeat(4_000), '::', 'et']) {
      const refused = await send(
        new Request(`${ORIGIN}/mcp`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: '{}',
        }),
      );
      expect(refused.status, token.slice(0, 20)).toBe(401);
      expect(refused.headers.get('www-authenticate'), token.slice(0, 20)).toContain('error="invalid_token"');
    }
  });
});
