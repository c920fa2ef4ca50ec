/**
 * The gateway's OAuth surface around its HTTP app (shared/auth/oauth.ts says what it is):
 * - `GET /.well-known/oauth-authorization-server`, `POST /oauth/register`, `POST /oauth/token`
 *   (codes, refresh, revocation): the OAuth provider's own endpoints, behind the guards below;
 * - `GET /.well-known/oauth-protected-resource/mcp[/<toolsets>]` (and without a path, for the
 *   HTTP routes): each resource's metadata, for every spelling of its URL;
 * - `GET`/`POST /authorize`: the consent page (shared/http/consent.ts);
 * - everything else goes to the app unchanged, API keys included; every 401 it answers gets a
 *   `WWW-Authenticate: Bearer` challenge naming the resource's metadata (and `error="invalid_token"`
 *   when a credential was sent), so that an MCP client discovers the flow on its first call.
 *
 * Guards in front of the provider: a registration is bounded in size and per address
 * (shared/auth/registration.ts); a `resource` parameter is read in its canonical form (every
 * spelling of a toolset URL is one resource); a refresh token already exchanged once revokes its
 * grant (shared/auth/refresh-reuse.ts); and OAuth settings that are wrong answer 503 naming a
 * trace id (the log names the variable), never a crash. Without the OAUTH_KV binding, OAuth is off
 * and the app is served alone.
 */
import {
  oauthEnabled,
  oauthHelpers,
  authorizationServer,
  canonicalResourceParameter,
  namedResource,
  OAUTH_DEFAULTS,
  OAUTH_PATHS,
  oauthSettings,
  type OAuthSettings,
  protectedResourceMetadata,
  resourceMetadataUrl,
  scopesOf,
  toolsetsOfResource,
  type ProviderEnv,
} from '../auth/oauth.ts';
import { REGISTRATION_LIMITS, registrationProblem } from '../auth/registration.ts';
import { replayedRefreshToken, retireRefreshToken, revokeReplayedGrant } from '../auth/refresh-reuse.ts';
import { namespaceOf, redisFromEnv } from '../concurrency/admission.ts';
import { FailedAttempts } from '../concurrency/rate-limit.ts';
import { log } from '../core/log.ts';
import type { Env } from '../runtime/env.ts';
import { openDb, type Authorize } from './authorize.ts';
import { consentHandler, type ConsentOptions } from './consent.ts';

type FetchHandler = (request: Request, env: Env, ctx: ExecutionContext) => Response | Promise<Response>;

/**
 * `app` with OAuth in front of it (see the module comment).
 *
 * @example
 * export default workerModule(withOAuth(createGateway(tools)));
 */
export function withOAuth(app: { fetch: FetchHandler; authorize: Authorize }, options: ConsentOptions = {}): { fetch: FetchHandler } {
  const consent = consentHandler(app.authorize, options);
  return {
    async fetch(request, env, ctx) {
      const url = new URL(request.url);
      if (!oauthEnabled(env, url)) return app.fetch(request, env, ctx);
      const path = url.pathname;
      const endpoint =
        path === OAUTH_PATHS.authorize ||
        path === OAUTH_PATHS.serverMetadata ||
        path === OAUTH_PATHS.token ||
        path === OAUTH_PATHS.register;
      if (endpoint) {
        const settings = oauthSettings(env);
        if ('problem' in settings) return misconfigured(settings.problem);
        if (path === OAUTH_PATHS.register && request.method === 'POST')
          return register(request, env, ctx, { settings, authorize: app.authorize });
      }
      if (path === OAUTH_PATHS.authorize) return consent(request, { env, waitUntil: (work) => ctx.waitUntil(work) });
      if (path === OAUTH_PATHS.token && request.method === 'POST') return token(request, env, ctx);
      if (endpoint) return authorizationServer(url.origin, env, openDb).fetch(request, env, ctx);
      if (path === OAUTH_PATHS.resourceMetadata || path.startsWith(`${OAUTH_PATHS.resourceMetadata}/`))
        return resourceMetadata(request, url);
      const response = await app.fetch(request, env, ctx);
      return response.status === 401 ? withChallenge(response, request, url) : response;
    },
  };
}

/** 503 for OAuth settings that are wrong: the log names the variable, the answer a trace id. */
function misconfigured(problem: string): Response {
  const traceId = crypto.randomUUID();
  log('error', 'config_error', { trace_id: traceId, reason: 'oauth_settings', message: problem });
  return oauthError(
    503,
    'temporarily_unavailable',
    `OAuth is not available: the deployment's OAuth configuration is wrong (CONFIG_ERROR). Its operator finds the cause in the worker's log under trace id ${traceId}.`,
  );
}

/**
 * `POST /oauth/register`: bounded in size and per address (the address the worker's authoriser
 * judges, which a client cannot choose; a registration in flight counts), then the provider's.
 */
async function register(
  request: Request,
  env: Env & ProviderEnv,
  ctx: ExecutionContext,
  { settings, authorize }: { settings: OAuthSettings; authorize: Authorize },
): Promise<Response> {
  const address = authorize.addressOf(request, env);
  const registrations = new FailedAttempts({
    redis: redisFromEnv(env),
    prefix: `${namespaceOf(env)}:oauth-registrations`,
    maxFailures: settings.registrationsPerHour,
    windowMs: REGISTRATION_LIMITS.windowMs,
  });
  const attempt = address ? registrations.take(address) : undefined;
  if (address && !attempt) {
    const seconds = Math.ceil(registrations.retryAfter(address) / 1000);
    const answer = oauthError(
      429,
      'too_many_requests',
      `This address registered ${settings.registrationsPerHour} clients within the last hour (or is registering them now), the most allowed. Register again in ${seconds} s, or reuse a client already registered.`,
    );
    answer.headers.set('retry-after', String(seconds));
    return answer;
  }
  let registered = false;
  try {
    const body = await request.text();
    const problem = registrationProblem(body);
    if (problem) return oauthError(400, problem.error, problem.error_description);
    const response = await authorizationServer(new URL(request.url).origin, env, openDb).fetch(
      new Request(request.url, { method: 'POST', headers: request.headers, body }),
      env,
      ctx,
    );
    registered = response.status < 300;
    return response;
  } finally {
    if (attempt) ctx.waitUntil(attempt.end(registered));
  }
}

/**
 * `POST /oauth/token`: the `resource` parameter in canonical form, and refresh-token reuse
 * detection around the provider's exchange (shared/auth/refresh-reuse.ts).
 */
async function token(request: Request, env: Env & ProviderEnv, ctx: ExecutionContext): Promise<Response> {
  const url = new URL(request.url);
  const server = authorizationServer(url.origin, env, openDb);
  if (!(request.headers.get('content-type') ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded'))
    return server.fetch(request, env, ctx);
  // Read as bytes: workerd warns when a form body is read with .text().
  const params = new URLSearchParams(new TextDecoder().decode(await request.arrayBuffer()));
  const resource = params.get('resource');
  if (resource !== null) params.set('resource', canonicalResourceParameter(resource, url.origin));
  const refreshToken = params.get('grant_type') === 'refresh_token' ? params.get('refresh_token') : null;
  if (refreshToken) {
    const replayed = await replayedRefreshToken(env.OAUTH_KV, refreshToken);
    if (replayed) {
      const db = openDb(env);
      if (!db) return oauthError(503, 'temporarily_unavailable', 'The service is not configured to check grants.');
      await revokeReplayedGrant(oauthHelpers(url.origin, env, openDb), db, replayed);
      log('warn', 'refresh_token_replayed', { project_id: replayed.userId, oauth_grant: replayed.grantId });
      return oauthError(
        400,
        'invalid_grant',
        'This refresh token was already exchanged for a new one, so this use is a replay: the whole grant is now revoked, with every token it issued. Authorize again.',
      );
    }
  }
  const headers = new Headers(request.headers);
  headers.delete('content-length');
  const response = await server.fetch(new Request(request.url, { method: 'POST', headers, body: params }), env, ctx);
  if (refreshToken && response.ok) await retireRefreshToken(env.OAUTH_KV, refreshToken, OAUTH_DEFAULTS.refreshTokenTtlSeconds);
  return response;
}

/** `GET /.well-known/oauth-protected-resource[<path>]`: the metadata of the resource at `<path>`, in the spelling asked for. */
function resourceMetadata(request: Request, url: URL): Response {
  const cors = { 'access-control-allow-origin': '*' };
  if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers: { ...cors, 'access-control-allow-methods': 'GET' } });
  if (request.method !== 'GET' && request.method !== 'HEAD')
    return new Response(null, { status: 405, headers: { ...cors, allow: 'GET, HEAD' } });
  const path = url.pathname.slice(OAUTH_PATHS.resourceMetadata.length);
  const resource = path === '' ? url.origin : namedResource(new URL(path, url.origin));
  if (!resource || (path !== '' && resource === url.origin)) {
    return Response.json(
      {
        error: 'not_found',
        error_description: `No protected resource at ${path.slice(0, 100)}: the MCP URLs are /mcp, /mcp/code and /mcp/<toolsets>.`,
      },
      { status: 404, headers: cors },
    );
  }
  return Response.json(protectedResourceMetadata(resource), { headers: { ...cors, 'cache-control': 'public, max-age=3600' } });
}

/** The response with its RFC 6750 challenge: the resource's metadata URL (in the spelling requested) and scopes, and the error when a credential was refused. */
function withChallenge(response: Response, request: Request, url: URL): Response {
  const resource = namedResource(url) ?? url.origin;
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

/** An OAuth error answer (RFC 6749 §5.2 form). */
function oauthError(status: number, error: string, description: string): Response {
  return Response.json({ error, error_description: description }, { status, headers: { 'cache-control': 'no-store' } });
}
