/**
 * An OAuth client of the gateway, driven by hand: registration (RFC 7591), PKCE (S256), the consent
 * form as a browser posts it, the token endpoint, and MCP requests with a token. Written once for
 * both sides of the tests: workerd (test/integration/oauth-flow.ts sends through the worker's own
 * fetch) and Node (test/browser/oauth-client.ts sends with `fetch` to wrangler dev). So it uses
 * only what both runtimes have (Request, URLSearchParams, Web Crypto) and imports nothing from
 * either: how a request reaches the gateway is the `send` of {@link OAuthClientOptions}.
 * A step that does not answer as the flow needs throws an error naming what came back instead.
 */

/** The redirect URI every test client registers (nothing listens there: the code is read off the redirect). */
export const REDIRECT = 'http://127.0.0.1:7777/callback';

export type Json = Record<string, any>;

/** Options of {@link oauthClient}. */
export interface OAuthClientOptions {
  /** The gateway's origin, as its OAuth metadata names it (`https://edge-tools.test`, or wrangler dev's URL). */
  origin: string;
  /** Sends one request to the gateway and answers its response, without following redirects. */
  send: (request: Request) => Promise<Response>;
  /** The API key that approves consents when a call names none (a client that only sends MCP requests needs none). */
  apiKey?: string;
  /** The resource authorized when a call names none; default `<origin>/mcp/study`. */
  resource?: string;
}

/** What an authorization request asks for; `resource` defaults to the client's. */
export interface Authorization {
  clientId: string;
  resource?: string;
  scope?: string;
  challenge?: string;
  method?: string;
  redirectUri?: string;
  state?: string;
}

/** What the consent form is posted with when approving: the approving key, the toolsets and the access. */
export interface Approval {
  apiKey?: string;
  toolsets?: string[];
  access?: 'read' | 'write';
}

/** A PKCE pair (RFC 7636): a random verifier and its S256 challenge. */
export async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  return { verifier, challenge };
}

/** `bytes` in base64url without padding (RFC 4648 §5), as PKCE writes them. */
export function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** The hidden fields of a consent page's form, their HTML entities decoded. */
export function consentFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[name!] = value!.replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code)));
  return fields;
}

/**
 * A client of the gateway at `options.origin`: every step of the flow, and the whole of it
 * ({@link connect}). Long as a whole, short in its parts: each step is a function of its own,
 * sharing the origin and `send` this closure holds.
 */
export function oauthClient({ origin, send, apiKey, resource: defaultResource = `${origin}/mcp/study` }: OAuthClientOptions) {
  /** One request to `path`; the status, the headers and the JSON body (`{}` when empty). */
  async function fetchJson(path: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: Json }> {
    const response = await send(new Request(origin + path, { redirect: 'manual', ...init }));
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Json) : {} };
  }

  /** Registers a client: public (PKCE only) unless `metadata` asks for a secret method. Throws unless 201. */
  async function register(metadata: Json = {}): Promise<{ clientId: string; clientSecret?: string }> {
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
    if (status !== 201) throw new Error(`Registration answered ${status}, expected 201: ${JSON.stringify(body)}`);
    return { clientId: body.client_id, clientSecret: body.client_secret };
  }

  /** The query of an authorization request (`state` 'state-1' and S256 unless told otherwise). */
  function authorizeQuery({
    clientId,
    resource = defaultResource,
    scope,
    challenge,
    method = 'S256',
    redirectUri = REDIRECT,
    state = 'state-1',
  }: Authorization): string {
    const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state, resource });
    if (scope) query.set('scope', scope);
    if (challenge) query.set('code_challenge', challenge);
    if (challenge && method) query.set('code_challenge_method', method);
    return query.toString();
  }

  /** Opens the consent page as a browser does: the page, its form's fields and the cookie that binds them. */
  async function openConsent(
    authorization: Authorization,
  ): Promise<{ response: Response; html: string; cookie: string; fields: Record<string, string> }> {
    const response = await send(new Request(`${origin}/authorize?${authorizeQuery(authorization)}`, { redirect: 'manual' }));
    const html = await response.text();
    const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0]!;
    return { response, html, cookie, fields: consentFields(html) };
  }

  /** Posts the consent form (a field given as a list is sent once per value); answers the response, redirects not followed. */
  function postConsent(cookie: string, form: Record<string, string | string[]>): Promise<Response> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(form)) for (const one of [value].flat()) body.append(name, one);
    return send(
      new Request(`${origin}/authorize`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body,
        redirect: 'manual',
      }),
    );
  }

  /**
   * Approves `authorization` (the study toolset, write access and the client's key unless told
   * otherwise); answers the code. Throws unless the page opens, the approval redirects to the
   * client's redirect URI, and the redirect names this issuer (RFC 9207).
   */
  async function approve(authorization: Authorization, { apiKey: key = apiKey, toolsets = ['study'], access = 'write' }: Approval = {}) {
    if (!key) throw new Error('Approving needs an API key: give one to oauthClient({ apiKey }) or to this call ({ apiKey }).');
    const consent = await openConsent(authorization);
    if (consent.response.status !== 200) throw new Error(`The consent page answered ${consent.response.status}: ${consent.html}`);
    const answer = await postConsent(consent.cookie, { ...consent.fields, toolset: toolsets, access, api_key: key, decision: 'approve' });
    const location = answer.headers.get('location');
    if (answer.status !== 302 || !location)
      throw new Error(`Approving answered ${answer.status} without a redirect: ${await answer.text()}`);
    const redirect = new URL(location);
    const redirectUri = authorization.redirectUri ?? REDIRECT;
    if (redirect.origin + redirect.pathname !== redirectUri)
      throw new Error(`Approving redirected to ${location}, expected ${redirectUri}`);
    if (redirect.searchParams.get('iss') !== origin)
      throw new Error(`The redirect's iss is ${redirect.searchParams.get('iss')}, expected ${origin}`);
    const code = redirect.searchParams.get('code');
    if (!code) throw new Error(`The redirect carries no code: ${location}`);
    return code;
  }

  /** A form post to the token endpoint with `params`. */
  function tokenRequest(params: Record<string, string>, headers: Record<string, string> = {}) {
    return fetchJson('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(params),
    });
  }

  /** Exchanges an authorization code for tokens with its PKCE verifier (the redirect URI the client registered unless told otherwise). */
  function exchangeCode({
    clientId,
    code,
    verifier,
    resource = defaultResource,
    redirectUri = REDIRECT,
  }: {
    clientId: string;
    code: string;
    verifier: string;
    resource?: string;
    redirectUri?: string;
  }) {
    return tokenRequest({
      grant_type: 'authorization_code',
      code,
      client_id: clientId,
      code_verifier: verifier,
      redirect_uri: redirectUri,
      resource,
    });
  }

  /**
   * A whole authorization of `resource` (as spelled): registration (named `clientName`), consent
   * approved as `approval` says, and the code exchanged with its PKCE verifier. Throws unless the
   * token endpoint answers 200.
   */
  async function connect(resource = defaultResource, { clientName, ...approval }: Approval & { clientName?: string } = {}) {
    const { clientId } = await register(clientName ? { client_name: clientName } : {});
    const { verifier, challenge } = await pkce();
    const code = await approve({ clientId, resource, challenge }, approval);
    const { status, body } = await exchangeCode({ clientId, code, verifier, resource });
    if (status !== 200) throw new Error(`The token endpoint answered ${status}, expected 200: ${JSON.stringify(body)}`);
    return {
      clientId,
      code,
      verifier,
      accessToken: body.access_token as string,
      refreshToken: body.refresh_token as string,
      scope: body.scope as string,
    };
  }

  /** One MCP request (protocol 2025-06-18) to `path` with `token`. */
  function mcp(path: string, token: string, method: string, params: Json = {}) {
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

  return { fetchJson, register, authorizeQuery, openConsent, postConsent, approve, tokenRequest, exchangeCode, connect, mcp };
}
