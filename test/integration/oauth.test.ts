/**
 * OAuth for MCP clients, against the real gateway in workerd with its KV namespace and the Neon
 * stand-in, on an https origin (as deployed): discovery from a 401, registration, the consent
 * form as a browser posts it, tokens on toolset URLs, refresh, revocation, and every refusal the
 * authorization specification asks for, each with its OAuth error and nothing issued. The same
 * flow driven by the MCP SDK's OAuth client through a real browser is test/browser/oauth.test.ts.
 */
import { env } from 'cloudflare:workers';
import { and, count, eq, isNull } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { apiKeys, oauthGrants } from '../../drizzle/schema.ts';
import { createKey, db, send, tenantA, unknownKey } from './helpers.ts';
import {
  approve,
  authorizeQuery,
  cardCount,
  connect,
  grantRows,
  mcp,
  openConsent,
  ORIGIN,
  pkce,
  postConsent,
  REDIRECT,
  register,
  tokenRequest,
  fetchJson,
  type Json,
} from './oauth-flow.ts';

// Each test runs whole authorizations (several requests each) on a shared, busy machine.
describe('discovery', { timeout: 60_000 }, () => {
  it('answers a 401 on every route with a challenge naming the resource metadata, which names this server and its scopes', async () => {
    for (const [path, resource] of [
      ['/mcp/study', `${ORIGIN}/mcp/study`],
      ['/mcp', `${ORIGIN}/mcp`],
      ['/tools/list-plans', ORIGIN],
      ['/executions', ORIGIN],
    ] as const) {
      const response = await send(
        new Request(ORIGIN + path, {
          method: path.startsWith('/executions') ? 'GET' : 'POST',
          headers: { 'content-type': 'application/json' },
          body: path.startsWith('/executions') ? undefined : '{}',
        }),
      );
      expect(response.status, path).toBe(401);
      const challenge = response.headers.get('www-authenticate')!;
      const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)![1]!;
      expect(challenge).toMatch(/^Bearer /);
      expect(challenge).not.toContain('error=');
      const metadata = await fetchJson(metadataUrl.slice(ORIGIN.length));
      expect(metadata.body).toMatchObject({ resource, authorization_servers: [ORIGIN], bearer_methods_supported: ['header'] });
    }
    const study = await fetchJson('/.well-known/oauth-protected-resource/mcp/study');
    expect(study.body.scopes_supported).toEqual(['study:read', 'study:write']);
    // A sent credential that is refused is named so (RFC 6750 invalid_token).
    const refused = await send(new Request(`${ORIGIN}/mcp/study`, { method: 'POST', headers: { authorization: 'Bearer not-a-token' } }));
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('publishes authorization server metadata: S256 only, registration, revocation, the issuer in responses', async () => {
    const { body } = await fetchJson('/.well-known/oauth-authorization-server');
    expect(body).toMatchObject({
      issuer: ORIGIN,
      authorization_endpoint: `${ORIGIN}/authorize`,
      token_endpoint: `${ORIGIN}/oauth/token`,
      registration_endpoint: `${ORIGIN}/oauth/register`,
      revocation_endpoint: `${ORIGIN}/oauth/token`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      authorization_response_iss_parameter_supported: true,
    });
    expect(body.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
    // One resource per choice of toolsets, named canonically (every other spelling of its URL is the same resource).
    expect(body.protected_resources).toEqual(
      expect.arrayContaining([`${ORIGIN}/mcp`, `${ORIGIN}/mcp/study`, `${ORIGIN}/mcp/documents,study`]),
    );
    expect(body.protected_resources).not.toContain(`${ORIGIN}/mcp/study,documents`);
  });
});

describe('a grant', { timeout: 60_000 }, () => {
  it('reaches its toolset only, read-only when so approved, as its project; API keys work alongside', async () => {
    const before = await cardCount();
    const readOnly = await connect(`${ORIGIN}/mcp`, { toolsets: ['study'], access: 'read' });
    expect(readOnly.scope).toBe('study:read');
    const listed = await mcp('/mcp', readOnly.accessToken, 'tools/list');
    const names = (listed.body.result.tools as { name: string; annotations: Json }[]).map((tool) => tool);
    expect(names.length).toBeGreaterThan(0);
    expect(names.every((tool) => tool.annotations.readOnlyHint === true)).toBe(true);
    expect(names.map((tool) => tool.name)).toContain('list-plans');
    expect(names.map((tool) => tool.name)).not.toContain('create-flashcard');
    expect(names.map((tool) => tool.name)).not.toContain('add-document');

    const plans = await mcp('/mcp', readOnly.accessToken, 'tools/call', { name: 'list-plans', arguments: {} });
    expect(plans.body.result.structuredContent.success).toBe(true);
    expect(plans.body.result.structuredContent.data.plans.length).toBeGreaterThan(0);
    for (const [name, args, reason] of [
      ['create-flashcard', { front: 'el perro', back: 'the dog' }, 'read_only'],
      ['add-document', { title: 'Not mine', content: '- [ ] a task' }, 'toolset_not_granted'],
    ] as const) {
      const refused = await mcp('/mcp', readOnly.accessToken, 'tools/call', { name, arguments: args });
      expect(refused.body.result.structuredContent.error).toMatchObject({ code: 'PERMISSION_DENIED', details: { reason } });
    }
    expect(await cardCount()).toBe(before);

    // The same call with a read and write grant writes, for tenant A.
    const readWrite = await connect(`${ORIGIN}/mcp/study`);
    expect(readWrite.scope).toBe('study:read study:write');
    const created = await mcp('/mcp/study', readWrite.accessToken, 'tools/call', {
      name: 'create-flashcard',
      arguments: { front: 'el gato', back: 'the cat' },
    });
    expect(created.body.result.structuredContent.success).toBe(true);
    expect(await cardCount()).toBe(before + 1);

    // An API key keeps working on the same URL, with every tool of it.
    const withKey = await mcp('/mcp/study', tenantA.apiKey, 'tools/list');
    expect((withKey.body.result.tools as unknown[]).length).toBeGreaterThan(names.length);
  });

  it('refreshes with rotation: the old refresh token fails once the new one is used, and its replay revokes the grant (OAuth 2.1 reuse detection)', async () => {
    const { clientId, refreshToken } = await connect();
    const first = await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
    expect(first.status).toBe(200);
    expect(first.body.refresh_token).not.toBe(refreshToken);
    const second = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: clientId });
    expect(second.status).toBe(200);
    expect((await mcp('/mcp/study', second.body.access_token, 'tools/list')).status).toBe(200);
    const stale = await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
    expect(stale).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(stale.body.access_token).toBeUndefined();
    // Whoever replayed it, the grant is gone: the latest tokens stop too, and its row is revoked.
    expect((await mcp('/mcp/study', second.body.access_token, 'tools/list')).status).toBe(401);
    expect(
      (await tokenRequest({ grant_type: 'refresh_token', refresh_token: second.body.refresh_token, client_id: clientId })).body.error,
    ).toBe('invalid_grant');
    const [row] = await db
      .select()
      .from(oauthGrants)
      .where(and(eq(oauthGrants.projectId, tenantA.projectId), eq(oauthGrants.clientId, clientId)));
    expect(row!.revokedAt).not.toBeNull();
  });

  it('stops within seconds when revoked: by the client (RFC 7009), in the database, or with the API key that approved it', async () => {
    const revokedByClient = await connect();
    const revocation = await tokenRequest({
      token: revokedByClient.refreshToken,
      token_type_hint: 'refresh_token',
      client_id: revokedByClient.clientId,
    });
    expect(revocation.status).toBe(200);
    expect((await mcp('/mcp/study', revokedByClient.accessToken, 'tools/list')).status).toBe(401);
    expect(
      (
        await tokenRequest({
          grant_type: 'refresh_token',
          refresh_token: revokedByClient.refreshToken,
          client_id: revokedByClient.clientId,
        })
      ).body.error,
    ).toBe('invalid_grant');

    const revokedHere = await connect();
    expect((await mcp('/mcp/study', revokedHere.accessToken, 'tools/list')).status).toBe(200);
    const { revokeGrant } = await import('../../shared/auth/grants.ts');
    const [row] = await db
      .select()
      .from(oauthGrants)
      .where(and(eq(oauthGrants.projectId, tenantA.projectId), eq(oauthGrants.clientId, revokedHere.clientId)));
    expect(await revokeGrant(db, row!.id)).toBe(true);
    await vi.waitFor(async () => expect((await mcp('/mcp/study', revokedHere.accessToken, 'tools/list')).status).toBe(401), {
      timeout: 10_000,
      interval: 200,
    });
    const refresh = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: revokedHere.refreshToken,
      client_id: revokedHere.clientId,
    });
    expect(refresh).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    // A key of its own, so that revoking it leaves the suite's keys alone.
    const { key, id: approverId } = await createKey(tenantA.projectId, { name: 'oauth approver' });
    const viaKey = await connect(`${ORIGIN}/mcp/study`, { apiKey: key });
    expect((await mcp('/mcp/study', viaKey.accessToken, 'tools/list')).status).toBe(200);
    await db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, approverId));
    await vi.waitFor(async () => expect((await mcp('/mcp/study', viaKey.accessToken, 'tools/list')).status).toBe(401), {
      timeout: 10_000,
      interval: 200,
    });
  });
});

describe('refused, with the OAuth error and nothing issued', { timeout: 60_000 }, () => {
  it('an authorization request without PKCE, or with plain PKCE', async () => {
    const publicClient = await register();
    const confidential = await register({ token_endpoint_auth_method: 'client_secret_basic' });
    const { challenge } = await pkce();
    for (const authorization of [
      { clientId: publicClient.clientId },
      { clientId: confidential.clientId },
      { clientId: publicClient.clientId, challenge, method: 'plain' },
    ]) {
      const response = await send(new Request(`${ORIGIN}/authorize?${authorizeQuery(authorization)}`, { redirect: 'manual' }));
      expect(response.status).toBe(302);
      const location = new URL(response.headers.get('location')!);
      expect(location.origin + location.pathname).toBe(REDIRECT);
      expect(location.searchParams.get('error')).toBe('invalid_request');
      expect(location.searchParams.get('code')).toBeNull();
    }
  });

  it('a redirect URI that differs by one character: shown an error, never redirected to', async () => {
    const { clientId } = await register();
    const { challenge } = await pkce();
    const response = await send(
      new Request(`${ORIGIN}/authorize?${authorizeQuery({ clientId, challenge, redirectUri: 'http://127.0.0.1:7777/callbacK' })}`, {
        redirect: 'manual',
      }),
    );
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(await response.text()).toContain('OAuth error: invalid_request');
  });

  it('a wrong verifier, another redirect URI at the token endpoint, and a reused code (whose tokens are then revoked)', async () => {
    const { clientId } = await register();
    const { verifier, challenge } = await pkce();
    const code = await approve({ clientId, challenge });
    const exchange = (params: Record<string, string>) =>
      tokenRequest({
        grant_type: 'authorization_code',
        code,
        client_id: clientId,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
        ...params,
      });
    for (const params of [{ code_verifier: (await pkce()).verifier }, { redirect_uri: 'http://127.0.0.1:7777/callbacK' }] as Record<
      string,
      string
    >[]) {
      const refused = await exchange(params);
      expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      expect(refused.body.access_token).toBeUndefined();
    }
    const first = await exchange({});
    expect(first.status).toBe(200);
    expect((await mcp('/mcp/study', first.body.access_token, 'tools/list')).status).toBe(200);
    const replay = await exchange({});
    expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(replay.body.access_token).toBeUndefined();
    expect((await mcp('/mcp/study', first.body.access_token, 'tools/list')).status).toBe(401);
    expect(
      (await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: clientId })).body.error,
    ).toBe('invalid_grant');
  });

  it("a token on another toolset's URL, or on the HTTP routes, and a token past its expiry", async () => {
    const { accessToken } = await connect(`${ORIGIN}/mcp/study`);
    for (const path of ['/mcp/documents', '/mcp', '/mcp/study,documents', '/tools/list-plans']) {
      const refused = await send(
        new Request(ORIGIN + path, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${accessToken}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: '{}',
        }),
      );
      expect(refused.status, path).toBe(401);
      expect(refused.headers.get('www-authenticate'), path).toContain('error="invalid_token"');
    }
    // Expiry: the token's record says when it ends; set that to a second ago.
    const [userId, grantId] = accessToken.split(':');
    const { keys } = await env.OAUTH_KV.list({ prefix: `token:${userId}:${grantId}:` });
    expect(keys.length).toBe(1);
    const record = (await env.OAUTH_KV.get(keys[0]!.name, 'json')) as Json;
    await env.OAUTH_KV.put(keys[0]!.name, JSON.stringify({ ...record, expiresAt: Math.floor(Date.now() / 1000) - 1 }));
    expect((await mcp('/mcp/study', accessToken, 'tools/list')).status).toBe(401);
  });

  it('a consent form posted without its CSRF token, or from a browser that did not open it, or with a wrong API key', async () => {
    const grantsBefore = await grantRows(tenantA.projectId);
    const { clientId } = await register();
    const { challenge } = await pkce();
    const consent = await openConsent({ clientId, challenge });
    const form = { ...consent.fields, toolset: 'study', access: 'write', api_key: tenantA.apiKey, decision: 'approve' };
    const withoutHandle = await postConsent(consent.cookie, { ...form, handle: '' });
    expect(withoutHandle.status).toBe(400);
    expect(withoutHandle.headers.get('location')).toBeNull();
    const withoutCookie = await postConsent('', form);
    expect(withoutCookie.status).toBe(400);
    expect(withoutCookie.headers.get('location')).toBeNull();
    const wrongKey = await postConsent(consent.cookie, { ...form, api_key: unknownKey() });
    expect(wrongKey.status).toBe(400);
    expect(await wrongKey.text()).toContain('The API key was refused');
    expect(await grantRows(tenantA.projectId)).toBe(grantsBefore);
    // The page is still good for the right key: the refusals spent nothing.
    expect((await postConsent(consent.cookie, form)).status).toBe(302);
    expect(await grantRows(tenantA.projectId)).toBe(grantsBefore + 1);
  });

  it('a person who denies: the client is told access_denied, and nothing is recorded', async () => {
    const { clientId } = await register();
    const { challenge } = await pkce();
    const consent = await openConsent({ clientId, challenge });
    const denied = await postConsent(consent.cookie, { ...consent.fields, decision: 'deny' });
    expect(denied.status).toBe(302);
    const location = new URL(denied.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('code')).toBeNull();
    expect(
      (
        await db
          .select({ n: count() })
          .from(oauthGrants)
          .where(and(eq(oauthGrants.clientId, clientId), isNull(oauthGrants.revokedAt)))
      )[0]!.n,
    ).toBe(0);
  });
});
