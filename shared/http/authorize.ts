/**
 * Credentials -> caller, once per request: every route that needs a caller (tool calls over HTTP,
 * MCP, the read routes, the consent page) authorises here and hands the result on (to the
 * pipeline, to the route). An API key (`et_…`) is checked against its hash (shared/runtime/auth.ts);
 * any other bearer token goes to the worker's {@link AuthorizeOptions.accessTokens}, if it takes
 * any (the gateway: OAuth access tokens, shared/runtime/oauth.ts). The
 * request's database and Redis clients are built here, once, and shared by everything it does.
 */
import { fail, type Failure } from '../core/contract.ts';
import { namespaceOf, redisFromEnv } from '../concurrency/admission.ts';
import { FailedAttempts } from '../concurrency/rate-limit.ts';
import { log } from '../core/log.ts';
import { authenticate, type AuthOptions, type Authorized, type RequestClients } from '../runtime/auth.ts';
import { createDb } from '../runtime/db.ts';
import { databaseFailure } from '../core/database.ts';
import type { RequestScope } from '../runtime/env.ts';
import { unexpected } from '../runtime/execute.ts';
import type { AccessTokens } from '../runtime/oauth.ts';

/** Who a request says it is: its `Authorization` header, the client's address and the URL it came to. */
export interface Credentials {
  /** The `Authorization` header. */
  authorization: string | null;
  /** `CF-Connecting-IP`: failed authentications are bounded per address. */
  clientAddress: string | null;
  /** The URL the request came to: an OAuth access token is valid only for the resource it was issued for. */
  url: string;
}

/** Reads the credentials of a request. */
export function credentialsOf(request: Request): Credentials {
  return { authorization: request.headers.get('authorization'), clientAddress: request.headers.get('cf-connecting-ip'), url: request.url };
}

/** Options of {@link authorize}. */
export interface AuthorizeOptions {
  /** The trace id of the request's answer: a CONFIG_ERROR names it, and the log line has it. Default: a new one. */
  traceId?: string;
  /** How API keys are cached and re-checked (shared/runtime/auth.ts, AUTH_DEFAULTS). */
  auth?: AuthOptions;
  /** Bearer tokens other than API keys that the worker takes (the gateway: OAuth's). Default: none. */
  accessTokens?: AccessTokens;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Resolves the caller of a request from its credentials, with the request's clients. Answers
 * UNAUTHENTICATED for a bad key or token, RATE_LIMITED for an address with too many failed
 * attempts. Without DATABASE_URL no credential can be verified: every caller gets the same
 * CONFIG_ERROR, which names nothing (the cause goes to the log). Never throws.
 */
export async function authorize(credentials: Credentials, scope: RequestScope, { traceId = crypto.randomUUID(), auth, accessTokens }: AuthorizeOptions = {}): Promise<Authorized | Failure> {
  const { env } = scope;
  if (!env.DATABASE_URL) {
    log('error', 'config_error', { trace_id: traceId, reason: 'missing_database_url', message: 'DATABASE_URL is not set: no API key can be verified and no tool can run. Set the secret (wrangler secret put DATABASE_URL).' });
    return fail('CONFIG_ERROR', `The service is not configured correctly, so it cannot verify API keys. Its operator can find the cause in the worker's log under trace id ${traceId}.`);
  }
  const clients: RequestClients = { db: createDb(env.DATABASE_URL), redis: redisFromEnv(env) };
  const token = BEARER.exec(credentials.authorization ?? '')?.[1];
  try {
    const tokenCaller = token && !token.startsWith('et_') && (await accessTokens?.(token, new URL(credentials.url), env, clients.db));
    if (tokenCaller) return 'error' in tokenCaller ? tokenCaller : { ok: true, ...tokenCaller, confirmed: Promise.resolve(undefined), ...clients };
    const failures = new FailedAttempts({ redis: clients.redis, prefix: `${namespaceOf(env)}:auth-failures` });
    const caller = await authenticate(credentials.authorization, clients.db, { clientAddress: credentials.clientAddress, failures, waitUntil: scope.waitUntil }, auth);
    return caller.ok ? { ...caller, ...clients } : caller;
  } catch (error) {
    return databaseFailure(error) ?? unexpected(error, traceId);
  }
}
