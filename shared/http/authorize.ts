/**
 * The HTTP surfaces' way to a caller: builds the request's database and Redis clients once (shared
 * by everything the request does) and the bound on failed attempts per address, and asks the auth
 * concern (shared/auth/authorize.ts) who the request is. Every route calls {@link authorize} with
 * its worker's one {@link AuthorizeOptions} object.
 */
import { fail, type Failure } from '../core/contract.ts';
import { authorizeRequest, type AuthorizeOptions, type Authorized, type Credentials, type RequestClients } from '../auth/authorize.ts';
import type { OAuthEnv, ProviderEnv } from '../auth/oauth.ts';
import { namespaceOf, redisFromEnv } from '../concurrency/admission.ts';
import { FailedAttempts } from '../concurrency/rate-limit.ts';
import { log } from '../core/log.ts';
import { createDb, isLoopbackHost } from '../runtime/db.ts';
import { databaseError, databaseFailure } from '../core/database.ts';
import type { RequestScope } from '../runtime/env.ts';
import { unexpected } from '../runtime/execute.ts';

export { credentialsOf, type AuthorizeOptions, type Credentials } from '../auth/authorize.ts';

/**
 * Resolves the caller of a request from its credentials, with the request's clients. Answers
 * UNAUTHENTICATED for a bad key or token, RATE_LIMITED for an address with too many failed
 * attempts. Without DATABASE_URL no credential can be verified: every caller gets the same
 * CONFIG_ERROR, which names nothing (the cause goes to the log). Never throws.
 */
export async function authorize(
  credentials: Credentials,
  scope: RequestScope,
  { traceId = crypto.randomUUID(), ...options }: AuthorizeOptions & { traceId?: string } = {},
): Promise<Authorized | Failure> {
  const { env } = scope;
  if (!env.DATABASE_URL) {
    log('error', 'config_error', {
      trace_id: traceId,
      reason: 'missing_database_url',
      message:
        'DATABASE_URL is not set: no API key can be verified and no tool can run. Set the secret (wrangler secret put DATABASE_URL).',
    });
    return fail(
      'CONFIG_ERROR',
      `The service is not configured correctly, so it cannot verify API keys. Its operator can find the cause in the worker's log under trace id ${traceId}.`,
    );
  }
  const clients: RequestClients = { db: createDb(env.DATABASE_URL), redis: redisFromEnv(env) };
  try {
    return await authorizeRequest(
      credentials,
      {
        clients,
        env,
        failures: new FailedAttempts({ redis: clients.redis, prefix: `${namespaceOf(env)}:auth-failures` }),
        waitUntil: scope.waitUntil,
        checkFailed: (error) =>
          databaseFailure(error) ??
          databaseError('The API key could not be checked against the database.', { kind: 'transient', cause: error }),
      },
      options,
    );
  } catch (error) {
    return databaseFailure(error) ?? unexpected(error, traceId);
  }
}

/**
 * Whether OAuth is on for requests to `url`: the KV namespace is bound, and the origin is one an
 * OAuth issuer may have (https, or http on a loopback host for local development).
 */
export function oauthEnabled<E extends OAuthEnv>(env: E, url: URL): env is E & ProviderEnv {
  return env.OAUTH_KV !== undefined && (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname)));
}

/** The database of the OAuth provider's callbacks (which run outside any route). */
export function openDb(env: OAuthEnv) {
  return env.DATABASE_URL ? createDb(env.DATABASE_URL) : undefined;
}
