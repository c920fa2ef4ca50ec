/**
 * The gateway's OAuth surface around its HTTP app (shared/runtime/oauth.ts says what it is):
 * - `GET /.well-known/oauth-authorization-server`, `POST /oauth/register`, `POST /oauth/token`
 *   (codes, refresh, revocation): the OAuth provider's own endpoints;
 * - `GET /.well-known/oauth-protected-resource/mcp[/<toolsets>]` (and without a path, for the
 *   HTTP routes): each resource's metadata;
 * - `GET`/`POST /authorize`: the consent page (shared/http/consent.ts);
 * - everything else goes to the app unchanged, API keys included; every 401 it answers gets a
 *   `WWW-Authenticate: Bearer` challenge naming the resource's metadata (and `error="invalid_token"`
 *   when a credential was sent), so that an MCP client discovers the flow on its first call.
 * Without the OAUTH_KV binding, OAuth is off and the app is served alone.
 */
import type { Env } from '../runtime/env.ts';
import { authorizationServer, OAUTH_PATHS, oauthEnabled, protectedResourceMetadata, resourceMetadataUrl, resourceOf, scopesOf, toolsetsOfResource } from '../runtime/oauth.ts';
import { consentHandler, type ConsentOptions } from './consent.ts';

type FetchHandler = (request: Request, env: Env, ctx: ExecutionContext) => Response | Promise<Response>;

/**
 * `app` with OAuth in front of it (see the module comment).
 *
 * @example
 * export default workerModule(withOAuth(createGateway(tools)));
 */
export function withOAuth(app: { fetch: FetchHandler }, options: ConsentOptions = {}): { fetch: FetchHandler } {
  const consent = consentHandler(options);
  return {
    async fetch(request, env, ctx) {
      const url = new URL(request.url);
      if (!oauthEnabled(env, url)) return app.fetch(request, env, ctx);
      const path = url.pathname;
      if (path === OAUTH_PATHS.authorize) return consent(request, { env, waitUntil: (work) => ctx.waitUntil(work) });
      if (path === OAUTH_PATHS.serverMetadata || path === OAUTH_PATHS.token || path === OAUTH_PATHS.register) {
        return authorizationServer(url.origin, env).fetch(request, env, ctx);
      }
      if (path === OAUTH_PATHS.resourceMetadata || path.startsWith(`${OAUTH_PATHS.resourceMetadata}/`)) return resourceMetadata(request, url);
      const response = await app.fetch(request, env, ctx);
      return response.status === 401 ? withChallenge(response, request, url) : response;
    },
  };
}

/** `GET /.well-known/oauth-protected-resource[<path>]`: the metadata of the resource at `<path>`. */
function resourceMetadata(request: Request, url: URL): Response {
  const cors = { 'access-control-allow-origin': '*' };
  if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers: { ...cors, 'access-control-allow-methods': 'GET' } });
  if (request.method !== 'GET' && request.method !== 'HEAD') return new Response(null, { status: 405, headers: { ...cors, allow: 'GET, HEAD' } });
  const path = url.pathname.slice(OAUTH_PATHS.resourceMetadata.length);
  const resource = path === '' ? url.origin : resourceOf(new URL(path, url.origin));
  if (!resource || (path !== '' && resource === url.origin)) {
    return Response.json({ error: 'not_found', error_description: `No protected resource at ${path}: the MCP URLs are /mcp and /mcp/<toolsets>.` }, { status: 404, headers: cors });
  }
  return Response.json(protectedResourceMetadata(resource), { headers: { ...cors, 'cache-control': 'public, max-age=3600' } });
}

/** The response with its RFC 6750 challenge: the resource's metadata URL and scopes, and the error when a credential was refused. */
function withChallenge(response: Response, request: Request, url: URL): Response {
  const resource = resourceOf(url) ?? url.origin;
  const parts = [
    'Bearer realm="edge-tools"',
    `resource_metadata="${resourceMetadataUrl(resource)}"`,
    `scope="${scopesOf(toolsetsOfResource(resource)).join(' ')}"`,
  ];
  if (request.headers.has('authorization')) parts.push('error="invalid_token"');
  const challenged = new Response(response.body, response);
  challenged.headers.set('www-authenticate', parts.join(', '));
  return challenged;
}
