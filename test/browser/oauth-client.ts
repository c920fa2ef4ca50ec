/**
 * An MCP client connected through the gateway's real OAuth flow, as the browser tests need one:
 * the flow of test/support/oauth-client.ts (registration, the consent form posted with a project's
 * API key, the code exchanged with PKCE S256) sent with `fetch` to wrangler dev. The flow itself
 * is tested in test/integration/oauth.test.ts.
 */
import { oauthClient } from '../support/oauth-client.ts';

/** The OAuth client of the gateway at `base` (wrangler dev's URL), approving with `apiKey`. */
export function clientOf(base: string, apiKey?: string) {
  return oauthClient({ origin: base, send: (request) => fetch(request), apiKey });
}

/** Registers `clientName`, approves it for the study toolset (read and write) with `apiKey`, and answers its access token. */
export async function connectClient(base: string, apiKey: string, clientName: string): Promise<{ accessToken: string }> {
  const { accessToken } = await clientOf(base, apiKey).connect(undefined, { clientName });
  return { accessToken };
}

/** The HTTP status of an MCP `tools/list` on the study toolset's URL with `token`. */
export async function mcpStatus(base: string, token: string): Promise<number> {
  return (await clientOf(base).mcp('/mcp/study', token, 'tools/list')).status;
}
