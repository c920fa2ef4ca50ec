/**
 * OAuth hygiene under attack, through the real gateway in workerd (OAuth on an https origin, as
 * deployed): refresh-token replay, framing of the pages /authorize serves, registration without
 * bounds, a misconfigured access-token lifetime, and bearer tokens that are no token.
 */
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import { createGateway } from '../../shared/http/app.ts';
import { withOAuth } from '../../shared/http/oauth.ts';
import { createKey, createProject, send, unknownKey } from './helpers.ts';
import { listed, rowsOf } from './auth-attacks-fixture.ts';
import { connect, fetchJson, openConsent, ORIGIN, pkce, postConsent, REDIRECT, register, tokenRequest, type Json } from './oauth-flow.ts';

let projectId: string;
/** The rows an attack could write in the file's project. */
const rows = () => rowsOf(projectId);

beforeAll(async () => {
  projectId = await createProject('Auth attacks');
}, 60_000);

/** The OAuth clients registered so far (the provider keeps each in KV). */
const clientCount = async () => (await env.OAUTH_KV.list({ prefix: 'client:' })).keys.length;

/** A registration's request (a public client unless `metadata` says otherwise), with `headers` added. */
const registration = (metadata: Json, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify({ client_name: 'Bounded', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', ...metadata }),
});

/** Sends registrations to `worker` with the lane's variables but the default bound, in a namespace of its own. */
function gatewayWith(worker: ReturnType<typeof withOAuth>) {
  const ownEnv = { ...env, OAUTH_REGISTRATIONS_PER_HOUR: undefined, CONCURRENCY_NAMESPACE: `registrations-${crypto.randomUUID()}` };
  return (init: RequestInit) => send(new Request(`${ORIGIN}/oauth/register`, init), worker, ownEnv);
}

// Each test runs whole authorizations (several requests each) on a shared, busy machine.
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

  it('registration is bounded in size: a long name, many or long redirect URIs, an oversized body', async () => {
    const before = await clientCount();
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
      const refused = await fetchJson('/oauth/register', registration(metadata));
      expect(refused.status, what).toBe(400);
      expect(refused.body.error, what).toBe(error);
      expect(refused.body.error_description, what).toMatch(/at most/);
    }
    expect(await clientCount()).toBe(before);
  });

  it('registration is bounded per address, with the default bound: a burst at once, under forged address headers, gets 20 clients', async () => {
    // The gateway as `npm run dev` serves it (every client is the machine), with the default bound
    // (the lane's worker raises it for the other files' registrations) and a namespace of its own.
    const local = gatewayWith(withOAuth(createGateway(tools)));
    const before = await clientCount();
    const forged = (i: number) => ({ 'cf-connecting-ip': `203.0.113.${i}`, 'x-forwarded-for': `198.51.100.${i}` });
    const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => local(registration({}, forged(i)))));
    const statuses = burst.map((response) => response.status).sort();
    expect(statuses).toEqual([...Array<number>(20).fill(201), ...Array<number>(10).fill(429)]);
    expect(await clientCount()).toBe(before + 20);
    const limited = burst.find((response) => response.status === 429)!;
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await limited.json()) as Json).error_description).toMatch(/registered 20 clients within the last hour/);
  });

  it('registration is bounded per address as deployed: the 21st from one address is refused, and other addresses are not', async () => {
    // As deployed: the address is Cloudflare's CF-Connecting-IP.
    const deployed = gatewayWith(withOAuth(createGateway(tools, { clientAddress: (request) => request.headers.get('cf-connecting-ip') })));
    const before = await clientCount();
    const from = (address: string) => registration({}, { 'cf-connecting-ip': address });
    for (let i = 0; i < 20; i++) expect((await deployed(from('203.0.113.7'))).status).toBe(201);
    const limited = await deployed(from('203.0.113.7'));
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await clientCount()).toBe(before + 20);
    expect((await deployed(from('192.0.2.99'))).status).toBe(201);
  });

  it('a misconfigured access-token lifetime answers 503 on the OAuth endpoints, never 500; API keys keep working, other bearers get 401', async () => {
    const gateway = withOAuth(createGateway(tools));
    const { key } = await createKey(projectId);
    for (const ttl of ['30', 'an hour', '-5', '1e3']) {
      const misconfigured = { ...env, OAUTH_ACCESS_TOKEN_TTL_SECONDS: ttl };
      const sendWith = (request: Request) => send(request, gateway, misconfigured);
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
