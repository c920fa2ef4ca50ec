/**
 * Credentials -> gate: the one place that decides who a request is. Every route that needs a
 * caller (tool calls over HTTP, MCP, code mode, the listings, the read routes, `/grants`,
 * `/metrics`, the dashboard's routes, the consent page) gets it from {@link authorizeRequest},
 * through the worker's one authoriser (shared/http/authorize.ts), which builds the request's
 * clients and passes them in. The bearer credential is read once (./bearer.ts); an API key (`et_…`)
 * is checked against its hash (./keys.ts); any other bearer token goes to the worker's
 * {@link AuthorizeOptions.accessTokens}, if it takes any (the gateway: OAuth access tokens,
 * ./oauth.ts, whose caller carries the grant's effective scope). The answer is a {@link Gate}.
 */
import { fail, type Failure } from '../core/contract.ts';
import { API_KEY_PREFIX, bearerToken } from './bearer.ts';
import { Gate, type GateClients } from './gate.ts';
import { authenticate, type AuthContext, type AuthOptions } from './keys.ts';
import type { AccessTokens, OAuthEnv } from './oauth.ts';

/** Who a request says it is: its `Authorization` header, the client's address and the URL it came to. */
export interface Credentials {
  /** The `Authorization` header. */
  authorization: string | null;
  /** The client's address as the deployment knows it ({@link clientAddressOf}): failed authentications are bounded per address. */
  clientAddress: string | null;
  /** The URL the request came to: an OAuth access token is valid only for the resource it was issued for. */
  url: string;
}

/**
 * The address every local client has: on a developer's machine the server listens on loopback
 * only, so every client is this machine, whatever address header it sends.
 */
const LOCAL_CLIENT_ADDRESS = 'loopback';

/**
 * The client's address, as the deployment knows it and the client cannot choose: deployed,
 * Cloudflare's `CF-Connecting-IP` (its edge sets it and overwrites any the client sent); on a
 * developer's machine ({@link LOCAL_CLIENT_ADDRESS}), where `wrangler dev` keeps a client-sent
 * `CF-Connecting-IP` as it is.
 */
export function clientAddressOf(request: Request, { local }: { local: boolean }): string | null {
  return local ? LOCAL_CLIENT_ADDRESS : request.headers.get('cf-connecting-ip');
}

/** How a worker authorises: built once per worker into its authoriser (shared/http/authorize.ts). */
export interface AuthorizeOptions {
  /** How API keys are cached and re-checked (./keys.ts, AUTH_DEFAULTS). */
  auth?: AuthOptions;
  /** Bearer tokens other than API keys that the worker takes (the gateway: OAuth's). Default: none. */
  accessTokens?: AccessTokens;
  /**
   * Where a request comes from, for the bound on unknown keys per address. Default
   * {@link clientAddressOf}; the tests give each case an address of its own.
   */
  clientAddress?: (request: Request, deployment: { local: boolean }) => string | null;
}

/** What authorising needs from the layers above: the request's clients, its variables, and the guards of {@link AuthContext}. */
export interface AuthorizeContext extends Omit<AuthContext, 'clientAddress'> {
  clients: GateClients;
  env: OAuthEnv;
}

const MALFORMED = fail('UNAUTHENTICATED', "The Authorization header must have the form 'Bearer <api key>'.", {
  hint: "Send the header 'Authorization: Bearer <api key>' with a key issued for your project (keys start with 'et_').",
});

/**
 * The gate of a request from its credentials, with the request's clients. Answers
 * UNAUTHENTICATED for a bad key or token, RATE_LIMITED for an address with too many failed
 * attempts. Database errors are thrown (the adapter turns them into DATABASE_ERROR).
 */
export async function authorizeRequest(
  credentials: Credentials,
  context: AuthorizeContext,
  { auth, accessTokens }: AuthorizeOptions = {},
): Promise<Gate | Failure> {
  const { clients, env } = context;
  const token = bearerToken(credentials.authorization);
  if (credentials.authorization && !token) return MALFORMED;
  if (token && !token.startsWith(API_KEY_PREFIX)) {
    const verified = await accessTokens?.(token, new URL(credentials.url), { env, db: clients.reader, context });
    if (verified) return 'error' in verified ? verified : new Gate(verified, clients);
  }
  const verified = await authenticate(token, clients.reader, { ...context, clientAddress: credentials.clientAddress }, auth);
  return 'error' in verified ? verified : new Gate(verified, clients);
}
