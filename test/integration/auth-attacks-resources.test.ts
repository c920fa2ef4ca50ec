/**
 * Attacks on an OAuth token's resource, through the real gateway in workerd (OAuth on an https
 * origin, as deployed): a token for /mcp/study on every other resource and route, a token for the
 * HTTP API on /grants, a limited key on /grants, and every spelling of a toolset URL through the
 * whole flow (discovery, consent, tokens, calls). Nothing may be accepted, and nothing written.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, createProject, send } from './helpers.ts';
import { DOCUMENT, grantRowOf, listed, rowsOf, STUDY_TOOL } from './auth-attacks-fixture.ts';
import {
  connect,
  exchangeCode,
  fetchJson,
  openConsent,
  ORIGIN,
  pkce,
  postConsent,
  register,
  tokenRequest,
  type Json,
} from './oauth-flow.ts';

let projectId: string;
/** The rows an attack could write in the file's project. */
const rows = () => rowsOf(projectId);

beforeAll(async () => {
  projectId = await createProject('Auth attacks');
}, 60_000);

// Each test runs whole authorizations (several requests each) on a shared, busy machine.
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
