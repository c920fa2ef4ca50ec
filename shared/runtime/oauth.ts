/**
 * OAuth 2.1 for MCP clients that connect by URL (claude.ai, Claude Desktop, ChatGPT, any client of
 * the MCP authorization specification), on `@cloudflare/workers-oauth-provider`, the library
 * Cloudflare's own remote MCP servers use. It serves authorization server metadata (RFC 8414),
 * dynamic client registration (RFC 7591), the token endpoint (authorization code with PKCE S256
 * only, refresh tokens that rotate) and revocation (RFC 7009), and keeps clients, codes and tokens
 * (hashed) in the OAUTH_KV namespace.
 *
 * - The issuer is the origin the gateway is called on, so one deployment needs no URL configured.
 * - Protected resources (RFC 9728): `/mcp`, and every toolset URL (`/mcp/study`,
 *   `/mcp/study,documents` in any order), each its own resource; and the origin itself for the
 *   HTTP routes. A token is bound to the one resource it was issued for (RFC 8707) and works
 *   nowhere else.
 * - Scopes are toolsets: `<toolset>:read` runs the toolset's tools that do not write,
 *   `<toolset>:write` all of them.
 * - Every token names its grant (shared/runtime/grants.ts), checked in the database on each use
 *   and on each refresh: revoking the grant, or the API key that approved it, stops its tokens.
 */
import { OAuthAuthorizationServer, OAuthError, type OAuthHelpers } from '@cloudflare/workers-oauth-provider';
import type { KVNamespace } from '@cloudflare/workers-types';
import { fail, type Failure } from '../core/contract.ts';
import { TOOLSETS, type Toolset } from '../core/toolsets.ts';
import { createDb, isLoopbackHost } from './db.ts';
import type { Database } from '../core/database.ts';
import type { Caller } from './auth.ts';
import { liveGrant, type LiveGrant } from './grants.ts';

/** The variables and bindings OAuth reads. */
export interface OAuthEnv {
  /** The KV namespace of the OAuth provider (clients, codes, tokens). Without it, OAuth is off. */
  OAUTH_KV?: KVNamespace;
  /** Seconds an access token lives (default {@link OAUTH_DEFAULTS}.accessTokenTtlSeconds). */
  OAUTH_ACCESS_TOKEN_TTL_SECONDS?: string;
  DATABASE_URL?: string;
}

/** Defaults of the OAuth provider's settings. */
export const OAUTH_DEFAULTS = {
  accessTokenTtlSeconds: 3_600,
  /** A grant's refresh tokens work for 30 days after approval (rotating on every use). */
  refreshTokenTtlSeconds: 30 * 24 * 3_600,
};

/** Where the gateway serves the OAuth endpoints. */
export const OAUTH_PATHS = {
  authorize: '/authorize',
  token: '/oauth/token',
  register: '/oauth/register',
  serverMetadata: '/.well-known/oauth-authorization-server',
  resourceMetadata: '/.well-known/oauth-protected-resource',
} as const;

/** What a grant's tokens carry (encrypted in KV): the grant they belong to. */
interface TokenProps {
  grantId: string;
}

type ProviderEnv = OAuthEnv & { OAUTH_KV: KVNamespace };

/** The scopes of a toolset: read runs its tools that do not write, write all of them. */
export function scopesOf(toolsets: readonly Toolset[]): string[] {
  return toolsets.flatMap((toolset) => [`${toolset}:read`, `${toolset}:write`]);
}

/** The toolsets and access that `scopes` ask for, within `offered` (all of it when they name none). */
export function accessOf(scopes: readonly string[], offered: readonly Toolset[]): { toolsets: Toolset[]; write: boolean } {
  const asked = offered.filter((toolset) => scopes.includes(`${toolset}:read`) || scopes.includes(`${toolset}:write`));
  if (asked.length === 0) return { toolsets: [...offered], write: true };
  return { toolsets: asked, write: asked.some((toolset) => scopes.includes(`${toolset}:write`)) };
}

/** The scopes of a grant. */
export function grantScopes(toolsets: readonly Toolset[], readOnly: boolean): string[] {
  return toolsets.flatMap((toolset) => (readOnly ? [`${toolset}:read`] : [`${toolset}:read`, `${toolset}:write`]));
}

/**
 * Every MCP path that is a resource of its own: `/mcp` and each toolset list in every order
 * (a client binds its token to the URL it was given, whatever order it lists the toolsets in).
 */
export const MCP_RESOURCE_PATHS: readonly string[] = ['/mcp', ...orderings(TOOLSETS).map((list) => `/mcp/${list.join(',')}`)];
const mcpResourcePaths = new Set(MCP_RESOURCE_PATHS);

/** The resource a request to `url` uses: its MCP URL, or the origin for every other route; undefined for an MCP path that is none. */
export function resourceOf(url: URL): string | undefined {
  if (url.pathname !== '/mcp' && !url.pathname.startsWith('/mcp/')) return url.origin;
  return mcpResourcePaths.has(url.pathname) ? url.origin + url.pathname : undefined;
}

/** The toolsets a resource serves: those of its MCP URL, every toolset for `/mcp` and the origin. */
export function toolsetsOfResource(resource: string): Toolset[] {
  const path = new URL(resource).pathname;
  if (!path.startsWith('/mcp/')) return [...TOOLSETS];
  const named = path.slice('/mcp/'.length).split(',');
  return named.filter((name): name is Toolset => (TOOLSETS as readonly string[]).includes(name));
}

/** The RFC 9728 document of a resource: where to authorize, and the scopes it accepts. */
export function protectedResourceMetadata(resource: string) {
  const origin = new URL(resource).origin;
  return {
    resource,
    authorization_servers: [origin],
    scopes_supported: scopesOf(toolsetsOfResource(resource)),
    bearer_methods_supported: ['header'],
    resource_name: resource === origin ? 'edge-tools HTTP API' : `edge-tools MCP (${toolsetsOfResource(resource).join(', ')})`,
  };
}

/** Where a resource's metadata is served: the well-known prefix before its path (RFC 9728 §3.1). */
export function resourceMetadataUrl(resource: string): string {
  const { origin, pathname } = new URL(resource);
  return origin + OAUTH_PATHS.resourceMetadata + (pathname === '/' ? '' : pathname);
}

// One authorization server per origin the gateway is called on (a deployment has one or two:
// workers.dev and a custom domain). Plain configuration, no I/O: safe at module scope.
const servers = new Map<string, OAuthAuthorizationServer<ProviderEnv>>();
const MAX_ORIGINS = 16;

/** The authorization server of an origin: issuer, resources and token lifetimes. */
export function authorizationServer(origin: string, env: ProviderEnv): OAuthAuthorizationServer<ProviderEnv> {
  let server = servers.get(origin);
  if (server) return server;
  if (servers.size >= MAX_ORIGINS) servers.clear();
  const accessTokenTTL = Number(env.OAUTH_ACCESS_TOKEN_TTL_SECONDS ?? OAUTH_DEFAULTS.accessTokenTtlSeconds);
  server = new OAuthAuthorizationServer<ProviderEnv>({
    issuer: origin,
    resources: [origin, ...MCP_RESOURCE_PATHS.map((path) => origin + path)],
    authorizeEndpoint: OAUTH_PATHS.authorize,
    tokenEndpoint: OAUTH_PATHS.token,
    clientRegistrationEndpoint: OAUTH_PATHS.register,
    // Clients named by the https URL of their metadata (claude.ai, ChatGPT) need no registration.
    clientIdMetadataDocumentEnabled: true,
    scopesSupported: scopesOf(TOOLSETS),
    accessTokenTTL: Number.isInteger(accessTokenTTL) && accessTokenTTL > 0 ? accessTokenTTL : OAUTH_DEFAULTS.accessTokenTtlSeconds,
    refreshTokenTTL: OAUTH_DEFAULTS.refreshTokenTtlSeconds,
    // A code exchange or a refresh of a grant revoked here (or whose key was) issues nothing, and
    // the provider then revokes the grant's tokens in KV too.
    tokenExchangeCallback: async ({ props, env: callbackEnv }) => {
      const grant = await grantOf(props as TokenProps, callbackEnv);
      if (!grant) throw new OAuthError('invalid_grant', { description: 'The grant was revoked, or the API key that approved it was: authorize again.' });
    },
  });
  servers.set(origin, server);
  return server;
}

/** The provider's helpers (consent, completing an authorization) for an origin. */
export function oauthHelpers(origin: string, env: ProviderEnv): OAuthHelpers {
  return authorizationServer(origin, env).getOAuthApi(env);
}

/**
 * Whether OAuth is on for requests to `url`: the KV namespace is bound, and the origin is one an
 * OAuth issuer may have (https, or http on a loopback host for local development).
 */
export function oauthEnabled<E extends OAuthEnv>(env: E, url: URL): env is E & ProviderEnv {
  return env.OAUTH_KV !== undefined && (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname)));
}

/**
 * The live grant an access token belongs to, for a request to `url`: the token must have been
 * issued for that URL's resource, not be expired or revoked, and its grant (and the API key that
 * approved it) must be live in the database. Answers UNAUTHENTICATED otherwise; database errors
 * are thrown.
 */
export async function grantOfToken(token: string, url: URL, env: ProviderEnv, db: Database): Promise<LiveGrant | Failure> {
  const resource = resourceOf(url);
  if (!resource) return notValid(`The MCP URL ${url.pathname} is not one an access token is issued for: use /mcp or /mcp/<toolsets> as the toolsets are named (e.g. /mcp/study,documents).`);
  const validated = await authorizationServer(url.origin, env).validateToken<TokenProps>(resource, token, env);
  if (!validated) return notValid('The access token is not valid here: it expired, was revoked, or was issued for another URL. Each token works only on the MCP URL it was issued for.');
  const grant = await liveGrant(db, validated.props.grantId);
  return grant ?? notValid('The access token belongs to a grant that was revoked (or whose API key was revoked).');
}

/**
 * Resolves a bearer token that is not an API key to its caller, for a request to `url`: a
 * worker's choice of which such tokens it takes (shared/http/authorize.ts). Undefined when it
 * takes none at that URL: the token is then refused as an API key would be. Database errors are thrown.
 */
export type AccessTokens = (token: string, url: URL, env: OAuthEnv, db: Database) => Promise<Caller | Failure | undefined>;

/**
 * The gateway's access tokens: OAuth's, wherever OAuth is on ({@link oauthEnabled}), as the
 * grant's caller (its project, the key that approved it, its toolsets and access). A tool's own
 * worker takes none: it is no resource a token is issued for, and so bundles no OAuth library.
 */
export const oauthAccessTokens: AccessTokens = async (token, url, env, db) => {
  if (!oauthEnabled(env, url)) return undefined;
  const grant = await grantOfToken(token, url, env, db);
  if ('error' in grant) return grant;
  const { project, apiKeyId: keyId, rateLimitPerMinute, toolsets, readOnly } = grant;
  return { project, keyId, rateLimitPerMinute, toolsets, readOnly };
};

async function grantOf(props: TokenProps, env: OAuthEnv): Promise<LiveGrant | undefined> {
  if (!env.DATABASE_URL) throw new OAuthError('temporarily_unavailable', { description: 'The service is not configured to check grants.', statusCode: 503 });
  return liveGrant(createDb(env.DATABASE_URL), props.grantId, { recheckAfterMs: 0 });
}

function notValid(message: string): Failure {
  return fail('UNAUTHENTICATED', message, {
    hint: 'Authorize again through your MCP client (it follows the WWW-Authenticate header of this answer), or send an API key: Authorization: Bearer et_…',
    details: { reason: 'invalid_token' },
  });
}

/** Every ordering of every non-empty subset of `items`. */
function orderings<T>(items: readonly T[]): T[][] {
  return items.flatMap((item, i) => {
    const rest = items.filter((_, j) => j !== i);
    return [[item], ...orderings(rest).map((tail) => [item, ...tail])];
  });
}
