/**
 * The HTTP surfaces' way to a caller: a worker's one authoriser ({@link createAuthorizer}), built
 * once from its options, builds each request's clients (the read-only and the writing database
 * client, Redis, the bound on failed attempts per address) and asks the auth concern
 * (shared/auth/authorize.ts) for the request's gate.
 */
import { fail, type Failure } from '../core/contract.ts';
import { authorizeRequest, clientAddressOf, type AuthorizeOptions, type Credentials } from '../auth/authorize.ts';
import type { Gate, GateClients } from '../auth/gate.ts';
import type { OAuthEnv } from '../auth/oauth.ts';
import { namespaceOf, redisFromEnv } from '../concurrency/admission.ts';
import { FailedAttempts } from '../concurrency/rate-limit.ts';
import { log } from '../core/log.ts';
import { createDb } from '../runtime/db.ts';
import { databaseError, databaseFailure } from '../core/database.ts';
import { runsLocally, type Env, type RequestScope } from '../runtime/env.ts';
import { unexpected } from '../runtime/execute.ts';

export type { AuthorizeOptions } from '../auth/authorize.ts';

/**
 * Authorises one request of the worker: its gate, or UNAUTHENTICATED for a bad key or token,
 * RATE_LIMITED for an address with too many failed attempts. `authorization` replaces the
 * request's own header (the consent page checks the key typed into its form). Never throws.
 */
export type Authorize = ((
  request: Request,
  scope: RequestScope,
  options?: { traceId?: string; authorization?: string },
) => Promise<Gate | Failure>) & {
  /** Where a request comes from, as this worker judges it: the address every per-address bound counts (OAuth registrations too). */
  addressOf(request: Request, env: Env): string | null;
};

/**
 * The worker's authoriser, from its options (how keys are cached, which other tokens it takes,
 * where a request comes from): built once per worker, used by every route. Without DATABASE_URL
 * no credential can be verified: every caller gets the same CONFIG_ERROR, which names nothing
 * (the cause goes to the log).
 *
 * @example
 * const authorize = createAuthorizer({ accessTokens: oauthAccessTokens(openDb) });
 * const gate = await authorize(c.req.raw, scopeOf(c));
 */
export function createAuthorizer(options: AuthorizeOptions = {}): Authorize {
  const chosen = options.clientAddress ?? clientAddressOf;
  const addressOf = (request: Request, env: Env) => chosen(request, { local: runsLocally(env) });
  const authorize = async (
    request: Request,
    scope: RequestScope,
    { traceId = crypto.randomUUID(), authorization }: { traceId?: string; authorization?: string } = {},
  ): Promise<Gate | Failure> => {
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
    const clients: GateClients = {
      reader: createDb(env.DATABASE_URL, { readOnly: true }),
      writer: createDb(env.DATABASE_URL),
      redis: redisFromEnv(env),
    };
    const credentials: Credentials = {
      authorization: authorization ?? request.headers.get('authorization'),
      clientAddress: addressOf(request, env),
      url: request.url,
    };
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
  };
  return Object.assign(authorize, { addressOf });
}

/** The database of the OAuth provider's callbacks (which run outside any route). */
export function openDb(env: OAuthEnv) {
  return env.DATABASE_URL ? createDb(env.DATABASE_URL) : undefined;
}
