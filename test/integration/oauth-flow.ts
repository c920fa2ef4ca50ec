/**
 * An OAuth client driven by hand against the real gateway in workerd, on an https origin (as
 * deployed): registration, PKCE, the consent form as a browser posts it, the token endpoint and
 * MCP requests with a token. Shared by test/integration/oauth.test.ts and auth-attacks.test.ts.
 */
import { count, eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { flashcards, oauthGrants } from '../../drizzle/schema.ts';
import { db, send, tenantA } from './helpers.ts';
export const ORIGIN = 'https://edge-tools.test';
export const REDIRECT = 'http://127.0.0.1:7777/callback';

export type Json = Record<string, any>;

export async function fetchJson(path: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: Json }> {
  const response = await send(new Request(ORIGIN + path, init));
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Json) : {} };
}

/** Registers a client (RFC 7591): public (PKCE only) unless a secret method is asked for. */
export async function register(metadata: Json = {}): Promise<{ clientId: string; clientSecret?: string }> {
  const { status, body } = await fetchJson('/oauth/register', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Test agent',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      ...metadata,
    }),
  });
  expect(status).toBe(201);
  return { clientId: body.client_id, clientSecret: body.client_secret };
}

export async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  return { verifier, challenge };
}

export function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

export interface Authorization {
  clientId: string;
  resource?: string;
  scope?: string;
  challenge?: string;
  method?: string;
  redirectUri?: string;
}

export function authorizeQuery({
  clientId,
  resource = `${ORIGIN}/mcp/study`,
  scope,
  challenge,
  method = 'S256',
  redirectUri = REDIRECT,
}: Authorization): string {
  const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: 'state-1', resource });
  if (scope) query.set('scope', scope);
  if (challenge) query.set('code_challenge', challenge);
  if (challenge && method) query.set('code_challenge_method', method);
  return query.toString();
}

/** Opens the consent page as a browser does: the page, its form's fields and the cookie that binds them. */
export async function openConsent(
  authorization: Authorization,
): Promise<{ response: Response; html: string; cookie: string; fields: Record<string, string> }> {
  const response = await send(new Request(`${ORIGIN}/authorize?${authorizeQuery(authorization)}`));
  const html = await response.text();
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0]!;
  const fields: Record<string, string> = {};
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[name!] = value!.replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code)));
  return { response, html, cookie, fields };
}

/** Posts the consent form; answers the redirect's location (or the page, when there is none). */
export async function postConsent(cookie: string, form: Record<string, string | string[]>): Promise<Response> {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) for (const one of [value].flat()) body.append(name, one);
  return send(
    new Request(`${ORIGIN}/authorize`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body,
      redirect: 'manual',
    }),
  );
}

/** Approves `authorization` with `apiKey` for `toolsets` and `access`; answers the code. */
export async function approve(
  authorization: Authorization,
  { apiKey = tenantA.apiKey, toolsets = ['study'], access = 'write' } = {},
): Promise<string> {
  const consent = await openConsent(authorization);
  expect(consent.response.status).toBe(200);
  const answer = await postConsent(consent.cookie, { ...consent.fields, toolset: toolsets, access, api_key: apiKey, decision: 'approve' });
  expect(answer.status).toBe(302);
  const location = new URL(answer.headers.get('location')!);
  expect(location.origin + location.pathname).toBe(authorization.redirectUri ?? REDIRECT);
  expect(location.searchParams.get('iss')).toBe(ORIGIN);
  return location.searchParams.get('code')!;
}

export function tokenRequest(params: Record<string, string>, headers: Record<string, string> = {}) {
  return fetchJson('/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params),
  });
}

/** A whole authorization for `resource`: registration, consent, code exchange. */
export async function connect(resource = `${ORIGIN}/mcp/study`, options: Parameters<typeof approve>[1] = {}) {
  const { clientId } = await register();
  const { verifier, challenge } = await pkce();
  const code = await approve({ clientId, resource, challenge }, options);
  const { status, body } = await tokenRequest({
    grant_type: 'authorization_code',
    code,
    client_id: clientId,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    resource,
  });
  expect(status).toBe(200);
  return {
    clientId,
    code,
    verifier,
    accessToken: body.access_token as string,
    refreshToken: body.refresh_token as string,
    scope: body.scope as string,
  };
}

/** One MCP request (2025-06-18) to `path` with `token`. */
export async function mcp(path: string, token: string, method: string, params: Json = {}) {
  return fetchJson(path, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
}

export const grantRows = async (projectId: string) =>
  (await db.select({ n: count() }).from(oauthGrants).where(eq(oauthGrants.projectId, projectId)))[0]!.n;
export const cardCount = async () =>
  (await db.select({ n: count() }).from(flashcards).where(eq(flashcards.projectId, tenantA.projectId)))[0]!.n;
