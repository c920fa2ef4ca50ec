/**
 * OAuth 2.1 for MCP clients that connect by URL (claude.ai, Claude Desktop, ChatGPT, any client of
 * the MCP authorization specification), on `@cloudflare/workers-oauth-provider`, the library
 * Cloudflare's own remote MCP servers use. It serves authorization server metadata (RFC 8414),
 * dynamic client registration (RFC 7591), the token endpoint (authorization code with PKCE S256
 * only, refresh tokens that rotate) and revocation (RFC 7009), and keeps clients, codes and tokens
 * (hashed) in the OAUTH_KV namespace.
 *
 * - The issuer is the origin the gateway is called on, so one deployment needs no URL configured.
 * - Protected resources (RFC 9728): `/mcp`, each choice of toolsets (`/mcp/documents,study`),
 *   code mode's `/mcp/code` (every toolset, reached from code), and the origin itself for the
 *   HTTP routes (`POST /code` included). Every spelling of a toolset URL the router accepts
 *   (`/mcp/Study`, `/mcp/task_analysis`, `/mcp/study/`, `/mcp/study,documents`) is the same
 *   resource as its canonical form ({@link canonicalResource}): tokens are bound to the canonical
 *   URL (RFC 8707) and work on every spelling of it, and nowhere else.
 * - Scopes are toolsets: `<toolset>:read` runs the toolset's tools that do not write,
 *   `<toolset>:write` all of them.
 * - Every token names its grant (shared/auth/grants.ts), checked in the database on each use
 *   and on each refresh: revoking the grant, or the API key that approved it, stops its tokens;
 *   narrowing the key narrows them.
 */
import { OAuthAuthorizationServer, OAuthError, type OAuthHelpers } from '@cloudflare/workers-oauth-provider';
import type { KVNamespace } from '@cloudflare/workers-types';
import { fail, type Failure } from '../core/contract.ts';
import type { Database } from '../core/database.ts';
import { isLoopbackHost } from '../core/loopback.ts';
import { parseToolsets, TOOLSETS, type Toolset } from '../core/toolsets.ts';
import type { Verification } from './gate.ts';
import { grantVerification, lookUpGrant } from './grants.ts';
import type { RecheckContext } from './verification.ts';

/** The variables and bindings OAuth reads. */
export interface OAuthEnv {
  /** The KV namespace of the OAuth provider (clients, codes, tokens). Without it, OAuth is off. */
  OAUTH_KV?: KVNamespace;
  /** Seconds an access token lives (default {@link OAUTH_DEFAULTS}.accessTokenTtlSeconds). */
  OAUTH_ACCESS_TOKEN_TTL_SECONDS?: string;
  /** Client registrations one address may make per hour (default {@link OAUTH_DEFAULTS}.registrationsPerHour). */
  OAUTH_REGISTRATIONS_PER_HOUR?: string;
  DATABASE_URL?: string;
}

/** The environment of an OAuth-enabled worker. */
export type ProviderEnv = OAuthEnv & { OAUTH_KV: KVNamespace };

/** Defaults of the OAuth provider's settings. */
export const OAUTH_DEFAULTS = {
  accessTokenTtlSeconds: 3_600,
  /** The shortest access-token lifetime: Cloudflare KV keeps nothing for less (its minimum expiration). */
  minAccessTokenTtlSeconds: 60,
  /** A grant's refresh tokens work for 30 days after approval (rotating on every use). */
  refreshTokenTtlSeconds: 30 * 24 * 3_600,
  /** Dynamic client registrations per client address per hour (./registration.ts). */
  registrationsPerHour: 20,
  /** The most an operator may set it to. */
  maxRegistrationsPerHour: 100_000,
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

/** The OAuth settings a deployment configured, once read and valid. */
export interface OAuthSettings {
  accessTokenTtlSeconds: number;
  registrationsPerHour: number;
}

/**
 * Reads the OAuth settings of `env`: the settings, or a sentence naming the variable that is
 * wrong, what it holds and what it must hold (the deployment then serves no OAuth and says so as
 * a CONFIG_ERROR, see shared/http/oauth.ts).
 */
export function oauthSettings(env: OAuthEnv): OAuthSettings | { problem: string } {
  const { accessTokenTtlSeconds, minAccessTokenTtlSeconds, refreshTokenTtlSeconds, registrationsPerHour, maxRegistrationsPerHour } =
    OAUTH_DEFAULTS;
  const ttl = wholeNumber(
    env,
    'OAUTH_ACCESS_TOKEN_TTL_SECONDS',
    'seconds',
    [minAccessTokenTtlSeconds, refreshTokenTtlSeconds],
    accessTokenTtlSeconds,
  );
  if (typeof ttl !== 'number') return ttl;
  const registrations = wholeNumber(
    env,
    'OAUTH_REGISTRATIONS_PER_HOUR',
    'registrations',
    [1, maxRegistrationsPerHour],
    registrationsPerHour,
  );
  if (typeof registrations !== 'number') return registrations;
  return { accessTokenTtlSeconds: ttl, registrationsPerHour: registrations };
}

/** A variable holding a whole number within `[min, max]`: its value, `fallback` when unset, or the problem. */
function wholeNumber(
  env: OAuthEnv,
  name: 'OAUTH_ACCESS_TOKEN_TTL_SECONDS' | 'OAUTH_REGISTRATIONS_PER_HOUR',
  unit: string,
  [min, max]: [number, number],
  fallback: number,
): number | { problem: string } {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (/^\s*\d+\s*$/.test(raw) && Number.isSafeInteger(value) && value >= min && value <= max) return value;
  return {
    problem: `${name} must be a whole number of ${unit} from ${min} to ${max} (default ${fallback}), but it is '${raw.slice(0, 40)}'.`,
  };
}

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

/** Code mode's MCP URL: a resource of its own, serving every toolset (its code calls the tools the token may call). */
export const CODE_MCP_PATH = '/mcp/code';

/** The canonical MCP paths: `/mcp`, code mode's, and each non-empty choice of toolsets, in catalog order. */
export const MCP_RESOURCE_PATHS: readonly string[] = ['/mcp', CODE_MCP_PATH, ...subsets(TOOLSETS).map((list) => `/mcp/${list.join(',')}`)];

/**
 * The canonical resource of a request to `url`: for an MCP URL, `/mcp` or `/mcp/<toolsets>` with
 * the toolsets as the router reads them (case, `_` for `-`, order and a trailing slash do not
 * matter), in catalog order; `/mcp/code` for code mode (spelled exactly so, as its route is);
 * the origin for every other route. Undefined for an MCP path that names no toolsets the router knows.
 *
 * @example
 * canonicalResource(new URL('https://x.dev/mcp/Study,task_analysis/')) // 'https://x.dev/mcp/task-analysis,study'
 */
export function canonicalResource(url: URL): string | undefined {
  const path = url.pathname.replace(/\/+$/, '') || '/';
  if (path === '/mcp' || path === CODE_MCP_PATH) return url.origin + path;
  if (!path.startsWith('/mcp/')) return url.origin;
  const list = safeDecode(path.slice('/mcp/'.length));
  if (list === undefined || list.includes('/')) return undefined;
  const parsed = parseToolsets(list);
  return parsed.ok ? `${url.origin}/mcp/${parsed.toolsets.join(',')}` : undefined;
}

/**
 * The canonical form of a `resource` parameter an OAuth client sent (the URL it was given, in any
 * spelling), or the parameter unchanged when it names none of `origin`'s resources (the OAuth
 * provider then refuses it with `invalid_target`).
 */
export function canonicalResourceParameter(resource: string, origin: string): string {
  if (!URL.canParse(resource)) return resource;
  const url = new URL(resource);
  if (url.origin !== origin || url.search || url.hash) return resource;
  return canonicalResource(url) ?? resource;
}

/**
 * The resource as a request to `url` names it, for its challenge and its metadata: the origin for
 * the HTTP routes, the MCP URL as sent (without a trailing slash) for MCP, because an MCP client
 * checks that the metadata's `resource` is the URL it was given; undefined for an MCP path that
 * is no resource.
 */
export function namedResource(url: URL): string | undefined {
  const canonical = canonicalResource(url);
  if (!canonical || canonical === url.origin) return canonical;
  return url.origin + url.pathname.replace(/\/+$/, '');
}

/** The toolsets a resource (in any spelling) serves: those of its MCP URL, every toolset for `/mcp`, `/mcp/code` and the origin. */
export function toolsetsOfResource(resource: string): Toolset[] {
  const canonical = canonicalResource(new URL(resource));
  const path = canonical ? new URL(canonical).pathname : '/';
  if (!path.startsWith('/mcp/') || path === CODE_MCP_PATH) return [...TOOLSETS];
  const named = path.slice('/mcp/'.length).split(',');
  return TOOLSETS.filter((toolset) => named.includes(toolset));
}

/** The RFC 9728 document of a resource, named as its client spells it: where to authorize, and the scopes it accepts. */
export function protectedResourceMetadata(named: string) {
  const origin = new URL(named).origin;
  return {
    resource: named,
    authorization_servers: [origin],
    scopes_supported: scopesOf(toolsetsOfResource(named)),
    bearer_methods_supported: ['header'],
    resource_name: resourceName(named),
  };
}

/** A resource's name for people (consent page, metadata). */
function resourceName(named: string): string {
  const url = new URL(named);
  if (named === url.origin) return 'edge-tools HTTP API';
  if (url.pathname === CODE_MCP_PATH) return `edge-tools code mode (${TOOLSETS.join(', ')})`;
  return `edge-tools MCP (${toolsetsOfResource(named).join(', ')})`;
}

/** Where a resource's metadata is served: the well-known prefix before its path (RFC 9728 §3.1). */
export function resourceMetadataUrl(resource: string): string {
  const { origin, pathname } = new URL(resource);
  return origin + OAUTH_PATHS.resourceMetadata + (pathname === '/' ? '' : pathname);
}

/** How the authorization server reaches the database (to check a grant at each code exchange and refresh). */
export type OpenDatabase = (env: OAuthEnv) => Database | undefined;

// One authorization server per origin the gateway is called on (a deployment has one or two:
// workers.dev and a custom domain). Plain configuration, no I/O: safe at module scope.
const servers = new Map<string, OAuthAuthorizationServer<ProviderEnv>>();
const MAX_ORIGINS = 16;

/**
 * The authorization server of an origin: issuer, canonical resources and token lifetimes. Throws
 * for settings {@link oauthSettings} refuses: shared/http/oauth.ts checks them on every request first.
 */
export function authorizationServer(origin: string, env: ProviderEnv, openDb: OpenDatabase): OAuthAuthorizationServer<ProviderEnv> {
  const settings = oauthSettings(env);
  if ('problem' in settings) throw new Error(settings.problem);
  const cacheKey = `${origin} ${settings.accessTokenTtlSeconds}`;
  let server = servers.get(cacheKey);
  if (server) return server;
  if (servers.size >= MAX_ORIGINS) servers.clear();
  server = new OAuthAuthorizationServer<ProviderEnv>({
    issuer: origin,
    resources: [origin, ...MCP_RESOURCE_PATHS.map((path) => origin + path)],
    authorizeEndpoint: OAUTH_PATHS.authorize,
    tokenEndpoint: OAUTH_PATHS.token,
    clientRegistrationEndpoint: OAUTH_PATHS.register,
    // Clients named by the https URL of their metadata (claude.ai, ChatGPT) need no registration.
    clientIdMetadataDocumentEnabled: true,
    scopesSupported: scopesOf(TOOLSETS),
    accessTokenTTL: settings.accessTokenTtlSeconds,
    refreshTokenTTL: OAUTH_DEFAULTS.refreshTokenTtlSeconds,
    // A code exchange or a refresh of a grant revoked here (or whose key was) issues nothing, and
    // the provider then revokes the grant's tokens in KV too.
    tokenExchangeCallback: async ({ props, env: callbackEnv }) => {
      const db = openDb(callbackEnv);
      if (!db)
        throw new OAuthError('temporarily_unavailable', { description: 'The service is not configured to check grants.', statusCode: 503 });
      const grant = await lookUpGrant(db, (props as TokenProps).grantId);
      if (!grant)
        throw new OAuthError('invalid_grant', {
          description: 'The grant was revoked, or the API key that approved it was: authorize again.',
        });
    },
  });
  servers.set(cacheKey, server);
  return server;
}

/** The provider's helpers (consent, completing an authorization, grants) for an origin. */
export function oauthHelpers(origin: string, env: ProviderEnv, openDb: OpenDatabase): OAuthHelpers {
  return authorizationServer(origin, env, openDb).getOAuthApi(env);
}

/**
 * The verification of an access token's grant, for a request to `url`: the token must have been
 * issued for that URL's resource (in any spelling), not be expired or revoked, and its grant (and
 * the API key that approved it) must be live in the database. Answers UNAUTHENTICATED otherwise;
 * database errors are thrown.
 */
export async function grantOfToken(
  token: string,
  url: URL,
  { env, db, openDb, context }: { env: ProviderEnv; db: Database; openDb: OpenDatabase; context: RecheckContext },
): Promise<Verification | Failure> {
  const resource = canonicalResource(url);
  if (!resource)
    return notValid(
      `The MCP URL ${url.pathname.slice(0, 100)} is not one an access token is issued for: use /mcp, /mcp/code or /mcp/<toolsets> as the toolsets are named (e.g. /mcp/study,documents).`,
    );
  let props: TokenProps | undefined;
  try {
    props = (await authorizationServer(url.origin, env, openDb).validateToken<TokenProps>(resource, token, env))?.props;
  } catch {
    // A bearer the provider cannot even read is no token of ours: refused like any other.
    props = undefined;
  }
  if (!props)
    return notValid(
      'The access token is not valid here: it expired, was revoked, or was issued for another URL. Each token works only on the URL it was issued for.',
    );
  return grantVerification(db, props.grantId, context);
}

/**
 * Resolves a bearer token that is not an API key to its verification, for a request to `url`: a
 * worker's choice of which such tokens it takes (shared/auth/authorize.ts). Undefined when it
 * takes none at that URL: the token is then refused as an API key would be. Database errors are thrown.
 */
export type AccessTokens = (
  token: string,
  url: URL,
  request: { env: OAuthEnv; db: Database; context: RecheckContext },
) => Promise<Verification | Failure | undefined>;

/**
 * Whether OAuth is on for requests to `url`: the KV namespace is bound, and the origin is one an
 * OAuth issuer may have (https, or http on a loopback host for local development).
 */
export function oauthEnabled<E extends OAuthEnv>(env: E, url: URL): env is E & ProviderEnv {
  return env.OAUTH_KV !== undefined && (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname)));
}

/**
 * The gateway's access tokens: OAuth's, where OAuth is on for the URL, verified through their
 * grant (its project, the key that approved it, its effective toolsets and access). A tool's own
 * worker takes none: it is no resource a token is issued for, and so bundles no OAuth library.
 */
export function oauthAccessTokens(openDb: OpenDatabase): AccessTokens {
  return async (token, url, { env, db, context }) => {
    if (!oauthEnabled(env, url)) return undefined;
    if ('problem' in oauthSettings(env)) {
      return notValid(
        "OAuth access tokens cannot be checked now: the deployment's OAuth configuration is wrong (its operator finds the cause in the log). Use an API key meanwhile.",
      );
    }
    return grantOfToken(token, url, { env, db, openDb, context });
  };
}

function notValid(message: string): Failure {
  return fail('UNAUTHENTICATED', message, {
    hint: 'Authorize again through your MCP client (it follows the WWW-Authenticate header of this answer), or send an API key: Authorization: Bearer et_…',
    details: { reason: 'invalid_token' },
  });
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** Every non-empty subset of `items`, each in the order of `items`. */
function subsets<T>(items: readonly T[]): T[][] {
  return items.flatMap((item, i) => [[item], ...subsets(items.slice(i + 1)).map((tail) => [item, ...tail])]);
}
