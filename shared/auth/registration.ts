/**
 * Bounds on dynamic client registration (RFC 7591, `POST /oauth/register`), which anyone may call:
 * what one registration may store (the provider keeps every client in KV and shows its name on the
 * consent page), and how many registrations one address may make. The provider validates the
 * metadata's meaning; this says how much of it there may be, before it sees any.
 */

/** The bounds, with their defaults. */
export const REGISTRATION_LIMITS = {
  /** The whole request body. */
  maxBodyBytes: 16 * 1024,
  /** `client_name`, shown on the consent page. */
  maxClientNameLength: 100,
  /** Each URI (`redirect_uris[]`, `client_uri`, `logo_uri`, `policy_uri`, `tos_uri`, `jwks_uri`). */
  maxUriLength: 2_000,
  /** How many redirect URIs one client may register. */
  maxRedirectUris: 10,
  /** Any other string, and any other list's length. */
  maxStringLength: 500,
  maxListLength: 10,
  /** The window of the bound on registrations per client address (how many: OAUTH_REGISTRATIONS_PER_HOUR, ./oauth.ts). */
  windowMs: 60 * 60 * 1000,
};

const URI_FIELDS = ['client_uri', 'logo_uri', 'policy_uri', 'tos_uri', 'jwks_uri'];

/** An example of a valid registration, for the errors. */
const EXAMPLE =
  '{"client_name":"My agent","redirect_uris":["https://agent.example.com/callback"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"]}';

/**
 * What is wrong with a registration body, as an RFC 7591 error (`invalid_client_metadata`, or
 * `invalid_redirect_uri`) whose description says what was wrong, what is allowed and what was
 * received; undefined when it is within bounds.
 */
export function registrationProblem(body: string, limits = REGISTRATION_LIMITS): { error: string; error_description: string } | undefined {
  const invalid = (what: string, error = 'invalid_client_metadata') => ({
    error,
    error_description: `${what} Example of a valid registration: ${EXAMPLE}`,
  });
  const bytes = new TextEncoder().encode(body).length;
  if (bytes > limits.maxBodyBytes) return invalid(`The registration is ${bytes} bytes; at most ${limits.maxBodyBytes} are accepted.`);
  let metadata: unknown;
  try {
    metadata = JSON.parse(body);
  } catch {
    return invalid('The registration must be a JSON object, but it could not be read as JSON.');
  }
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
    return invalid('The registration must be a JSON object.');
  const fields = metadata as Record<string, unknown>;
  const name = fields.client_name;
  if (typeof name === 'string' && name.length > limits.maxClientNameLength) {
    return invalid(`'client_name' may have at most ${limits.maxClientNameLength} characters, but has ${name.length}.`);
  }
  const redirects = fields.redirect_uris;
  if (Array.isArray(redirects)) {
    if (redirects.length > limits.maxRedirectUris)
      return invalid(
        `'redirect_uris' may list at most ${limits.maxRedirectUris} URIs, but lists ${redirects.length}.`,
        'invalid_redirect_uri',
      );
    const long = redirects.findIndex((uri) => typeof uri === 'string' && uri.length > limits.maxUriLength);
    if (long >= 0)
      return invalid(
        `'redirect_uris[${long}]' may have at most ${limits.maxUriLength} characters, but has ${(redirects[long] as string).length}.`,
        'invalid_redirect_uri',
      );
  }
  for (const [field, value] of Object.entries(fields)) {
    const max = URI_FIELDS.includes(field) ? limits.maxUriLength : limits.maxStringLength;
    if (typeof value === 'string' && field !== 'client_name' && value.length > max)
      return invalid(`'${field.slice(0, 40)}' may have at most ${max} characters, but has ${value.length}.`);
    if (Array.isArray(value) && field !== 'redirect_uris') {
      if (value.length > limits.maxListLength)
        return invalid(`'${field.slice(0, 40)}' may list at most ${limits.maxListLength} entries, but lists ${value.length}.`);
      if (value.some((entry) => typeof entry === 'string' && entry.length > limits.maxStringLength))
        return invalid(`Each entry of '${field.slice(0, 40)}' may have at most ${limits.maxStringLength} characters.`);
    }
  }
  return undefined;
}
