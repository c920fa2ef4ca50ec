/**
 * Credentials -> caller: the one place that decides who a request is. Every route that needs a
 * caller (tool calls over HTTP, MCP, the listings, the read routes, `/grants`, `/metrics`, the
 * dashboard's routes, the consent page) gets it from {@link authorizeRequest}, through the HTTP
 * surface's adapter (shared/http/authorize.ts), which builds the request's clients and passes
 * them in. The bearer credential is read once (shared/auth/bearer.ts); an API key (`et_…`) is
 * checked against its hash (shared/auth/keys.ts); any other bearer token goes to the worker's
 * {@link AuthorizeOptions.accessTokens}, if it takes any (the gateway: OAuth access tokens,
 * shared/auth/oauth.ts, whose caller carries the grant's effective scope).
 */
import type { Redis } from '@upstash/redis';
import { fail, type Failure } from '../core/contract.ts';
import type { Database } from '../core/database.ts';
import { API_KEY_PREFIX, bearerToken } from './bearer.ts';
import type { Authenticated } from './caller.ts';
import { authenticate, type AuthContext, type AuthOptions } from './keys.ts';
import type { AccessTokens, OAuthEnv } from './oauth.ts';

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

/**
 * The clients of one request, built once when it is authorised and shared by everything the
 * request does: authorisation, admission (rate limit, semaphore), idempotency records and the trace.
 */
export interface RequestClients {
  db: Database;
  /** Undefined when the deployment has no Redis (local development, or the in-process semaphore). */
  redis: Redis | undefined;
}

/** An authorised request, whatever its credential (API key or OAuth token): its caller and its clients. */
export type Authorized = Authenticated & RequestClients;

/** How a worker authorises: the same object for every route of the worker. */
export interface AuthorizeOptions {
  /** How API keys are cached and re-checked (shared/auth/keys.ts, AUTH_DEFAULTS). */
  auth?: AuthOptions;
  /** Bearer tokens other than API keys that the worker takes (the gateway: OAuth's). Default: none. */
  accessTokens?: AccessTokens;
}

/** What authorising needs from the layers above: the request's clients, its variables, and the guards of {@link AuthContext}. */
export interface AuthorizeContext extends Omit<AuthContext, 'clientAddress'> {
  clients: RequestClients;
  env: OAuthEnv;
}

const MALFORMED = fail('UNAUTHENTICATED', "The Authorization header must have the form 'Bearer <api key>'.", {
  hint: "Send the header 'Authorization: Bearer <api key>' with a key issued for your project (keys start with 'et_').",
});

/**
 * Resolves the caller of a request from its credentials, with the request's clients. Answers
 * UNAUTHENTICATED for a bad key or token, RATE_LIMITED for an address with too many failed
 * attempts. Database errors are thrown (the adapter turns them into DATABASE_ERROR).
 */
export async function authorizeRequest(
  credentials: Credentials,
  context: AuthorizeContext,
  { auth, accessTokens }: AuthorizeOptions = {},
): Promise<Authorized | Failure> {
  const { clients } = context;
  const token = bearerToken(credentials.authorization);
  if (credentials.authorization && !token) return MALFORMED;
  if (token && !token.startsWith(API_KEY_PREFIX)) {
    const tokenCaller = await accessTokens?.(token, new URL(credentials.url), context.env, clients.db);
    if (tokenCaller)
      return 'error' in tokenCaller
        ? tokenCaller
        : Object.assign({ ok: true as const, ...tokenCaller, confirmed: Promise.resolve(undefined) }, clients);
  }
  const caller = await authenticate(token, clients.db, { ...context, clientAddress: credentials.clientAddress }, auth);
  // The same object, not a copy: the key's re-check refreshes this caller's scope in place.
  return caller.ok ? Object.assign(caller, clients) : caller;
}
