/**
 * The one reading of `Authorization: Bearer <credential>` (RFC 6750 §2.1): every credential the
 * service takes (API keys, OAuth access tokens, the Prometheus scrape token) arrives this way.
 */

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The credential of an `Authorization` header, or undefined when the header is absent or not `Bearer <one token>`. */
export function bearerToken(authorization: string | null | undefined): string | undefined {
  return BEARER.exec(authorization ?? '')?.[1];
}

/** The prefix of every API key: a bearer token without it is some other credential (an OAuth access token). */
export const API_KEY_PREFIX = 'et_';
