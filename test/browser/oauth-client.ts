/**
 * An MCP client connected through the gateway's real OAuth flow, as the browser tests need one:
 * registration, the consent form posted with a project's API key, and the code exchanged for
 * tokens with PKCE (S256). The flow itself is tested in test/integration/oauth.test.ts.
 */

const REDIRECT = 'http://127.0.0.1:7777/callback';

/** Registers `clientName`, approves it for the study toolset (read and write) with `apiKey`, and answers its access token. */
export async function connectClient(base: string, apiKey: string, clientName: string): Promise<{ accessToken: string }> {
  const resource = `${base}/mcp/study`;
  const registered = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: clientName,
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
    }),
  });
  if (registered.status !== 201) throw new Error(`Registration answered ${registered.status}: ${await registered.text()}`);
  const { client_id: clientId } = (await registered.json()) as { client_id: string };

  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    state: 'dashboard',
    resource,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const consent = await fetch(`${base}/authorize?${query}`, { redirect: 'manual' });
  if (consent.status !== 200) throw new Error(`The consent page answered ${consent.status}: ${await consent.text()}`);
  const html = await consent.text();
  const cookie = (consent.headers.get('set-cookie') ?? '').split(';')[0]!;
  const form = new URLSearchParams();
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    form.append(
      name!,
      value!.replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code))),
    );
  for (const [name, value] of [
    ['toolset', 'study'],
    ['access', 'write'],
    ['api_key', apiKey],
    ['decision', 'approve'],
  ])
    form.append(name!, value!);
  const approved = await fetch(`${base}/authorize`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
    redirect: 'manual',
  });
  const location = approved.headers.get('location');
  const code = location ? new URL(location).searchParams.get('code') : null;
  if (approved.status !== 302 || !code) throw new Error(`Approving answered ${approved.status} without a code: ${await approved.text()}`);

  const token = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      client_id: clientId,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      resource,
    }),
  });
  const tokens = (await token.json()) as { access_token?: string };
  if (token.status !== 200 || !tokens.access_token)
    throw new Error(`The token endpoint answered ${token.status}: ${JSON.stringify(tokens)}`);
  return { accessToken: tokens.access_token };
}

/** The HTTP status of an MCP `tools/list` on the study toolset's URL with `token`. */
export async function mcpStatus(base: string, token: string): Promise<number> {
  const response = await fetch(`${base}/mcp/study`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  await response.body?.cancel();
  return response.status;
}

function base64url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url');
}
