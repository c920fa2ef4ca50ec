/**
 * The consent page at `/authorize`: a person sees which client asks (its name and the host its
 * redirect goes to), for which toolsets, read-only or read and write; proves authority over a
 * project by entering one of its API keys; may narrow the toolsets and the access; and approves or
 * denies. Plain HTML forms, no JavaScript. The OAuth provider's consent helpers bind the form to
 * the browser that opened it (a one-time handle and a `__Host-` cookie: the CSRF protection); the
 * provider checks the client and its exact redirect URI before the page is shown. Every page
 * served here forbids framing (`X-Frame-Options: DENY`, CSP `frame-ancestors 'none'`).
 *
 * A grant never reaches further than the key that approves it: once the key is known, a choice
 * wider than the key's toolsets is answered with the form again, offering only the key's
 * toolsets and saying so; and the grant's tokens are intersected with the key's toolsets on every
 * use (shared/auth/grants.ts), so narrowing the key later narrows them too.
 *
 * Who may approve is one function, {@link ConsentOptions.approver}: by default the holder of an
 * API key of the project. A deployment that signs people in with its own identity provider
 * (Cloudflare Access, GitHub, any OIDC) passes its own: it reads the signed-in person from the
 * request (e.g. Access's `Cf-Access-Jwt-Assertion`, verified), and answers the API key that
 * person's approvals are recorded under, or a failure.
 */
import {
  AuthorizationError,
  authorizationErrorRedirect,
  CimdFetchError,
  type AuthRequest,
  type ConsentDescription,
} from '@cloudflare/workers-oauth-provider';
import type { Failure } from '../core/contract.ts';
import type { Database } from '../core/database.ts';
import { TOOLSET_PURPOSES, type Toolset } from '../core/toolsets.ts';
import { recordGrant } from '../auth/grants.ts';
import {
  accessOf,
  canonicalResourceParameter,
  grantScopes,
  OAUTH_DEFAULTS,
  oauthHelpers,
  toolsetsOfResource,
  type ProviderEnv,
} from '../auth/oauth.ts';
import type { Env, RequestScope } from '../runtime/env.ts';
import { openDb, type Authorize } from './authorize.ts';

/**
 * Who approves: the project, the API key the grant is recorded under, the toolsets it may grant,
 * and the client that writes the grant, which only the gate gives (`gate.pass()`,
 * shared/auth/gate.ts): an approval starts only once that key is confirmed valid now.
 */
export interface Approver {
  projectId: string;
  apiKeyId: string;
  /** The toolsets the approver may grant; undefined for all. */
  toolsets?: readonly Toolset[];
  db: Database;
}

/** Options of {@link consentHandler}. */
export interface ConsentOptions {
  /**
   * Decides who approves, from the posted form and the request. Default: the holder of one of the
   * project's API keys, entered in the form's "API key" field ({@link apiKeyApprover}).
   */
  approver?: (form: FormData, request: Request, scope: RequestScope, authorize: Authorize) => Promise<Approver | Failure>;
  /** Whether the page asks for an API key (false when an identity provider signs the person in). */
  asksForApiKey?: boolean;
}

/** The default approver: the holder of an API key of the project, checked as every call's key is. */
export async function apiKeyApprover(
  form: FormData,
  request: Request,
  scope: RequestScope,
  authorize: Authorize,
): Promise<Approver | Failure> {
  const key = String(form.get('api_key') ?? '').trim();
  const gate = await authorize(request, scope, { authorization: `Bearer ${key}` });
  if (!gate.ok) return gate;
  // Approving changes state: through the gate, on the key's scope as it is now.
  const passed = await gate.pass();
  if ('error' in passed) return passed;
  const { caller, db } = passed;
  return { projectId: caller.project.id, apiKeyId: caller.keyId, toolsets: caller.toolsets as readonly Toolset[] | undefined, db };
}

/** `GET` and `POST /authorize`, authorising keys with the worker's `authorize`. */
export function consentHandler(authorize: Authorize, { approver = apiKeyApprover, asksForApiKey = true }: ConsentOptions = {}) {
  return async (request: Request, scope: RequestScope & { env: Env & ProviderEnv }): Promise<Response> => {
    const origin = new URL(request.url).origin;
    const consent: Consent = { oauth: oauthHelpers(origin, scope.env, openDb), asksForApiKey };
    try {
      if (request.method === 'GET') return await showPage(consent, request.url);
      if (request.method !== 'POST')
        return page('Not allowed', '<p>The consent page answers GET and POST only.</p>', 405, { allow: 'GET, POST' });
      const form = await request.formData();
      const handle = String(form.get('handle') ?? '');
      if (form.get('decision') === 'deny') {
        const denied = await consent.oauth.denyConsent(request, handle);
        return new Response(null, { status: 302, headers: denied.headers });
      }
      const chosen = form.getAll('toolset').map(String);
      // The person's own mistakes are answered with the page again, before the handle is spent.
      const retry = (message: string, keyToolsets?: readonly Toolset[]) =>
        showPage(consent, `${origin}/authorize?${String(form.get('request') ?? '')}`, message, handle, keyToolsets);
      if (!handle)
        throw new AuthorizationError('invalid_request', {
          description: 'The form was posted without its consent handle (the CSRF token).',
        });
      if (chosen.length === 0) return await retry('Choose at least one toolset to approve, or deny.');
      const who = await approver(form, request, scope, authorize);
      if ('error' in who) return await retry(`The API key was refused: ${who.error.message}`);
      // The key is known: a choice wider than what it may grant is shown again, narrowed to the key.
      const beyondKey = who.toolsets ? chosen.filter((toolset) => !who.toolsets!.includes(toolset as Toolset)) : [];
      if (beyondKey.length > 0) {
        return await retry(
          who.toolsets!.length === 0
            ? 'This API key reaches no toolset, so it cannot approve anything. Use another key of the project.'
            : `This API key may grant only ${who.toolsets!.join(', ')}, so ${beyondKey.join(', ')} ${beyondKey.length === 1 ? 'is' : 'are'} no longer offered. Check the toolsets below and approve again, or use a key that reaches more.`,
          who.toolsets,
        );
      }
      return await approve(consent, request, { handle, chosen, write: form.get('access') === 'write', who });
    } catch (error) {
      return errorPage(error);
    }
  };
}

/** What every step of one consent request shares: the provider's helpers, and whether the page asks for a key. */
interface Consent {
  oauth: ReturnType<typeof oauthHelpers>;
  asksForApiKey: boolean;
}

/**
 * Parses the authorization request at `url` and shows its consent page (with `problem`, after a
 * refused post; offering only `keyToolsets` once the approving key is known).
 */
async function showPage(
  { oauth, asksForApiKey }: Consent,
  url: string,
  problem?: string,
  previousHandle?: string,
  keyToolsets?: readonly Toolset[],
): Promise<Response> {
  const authRequest = await oauth.parseAuthRequest(new Request(canonicalRequestUrl(url)));
  if (!authRequest.codeChallenge) {
    return Response.redirect(
      authorizationErrorRedirect(authRequest, 'invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.'),
      302,
    );
  }
  const details = await oauth.describeConsent(authRequest);
  const consent = previousHandle ? { handle: previousHandle, headers: new Headers() } : await oauth.beginConsent(authRequest);
  const body = consentForm(authRequest, details, consent.handle, new URL(url).search.slice(1), asksForApiKey, problem, keyToolsets);
  return page(`Connect ${details.clientName}`, body, problem ? 400 : 200, consent.headers);
}

/**
 * Approves what the person chose, within what the client asked for and the approver may grant:
 * spends the handle, records the grant and redirects to the client with the code.
 */
async function approve(
  { oauth }: Consent,
  request: Request,
  { handle, chosen, write, who }: { handle: string; chosen: string[]; write: boolean; who: Approver },
): Promise<Response> {
  const approved = await oauth.approveConsent(request, handle);
  const resource = approved.request.resource!;
  // Within what the client asked for: the person narrows, never widens.
  const asked = accessOf(approved.request.scope, toolsetsOfResource(resource));
  const toolsets = asked.toolsets.filter((toolset) => chosen.includes(toolset) && (!who.toolsets || who.toolsets.includes(toolset)));
  if (toolsets.length === 0) {
    return page(
      'Nothing to approve',
      `<p>The API key may not grant the toolsets chosen (${escape(chosen.join(', '))}). Start the connection again from your client.</p>`,
      403,
    );
  }
  const client = await oauth.describeConsent(approved.request);
  const grantId = crypto.randomUUID();
  const readOnly = !(write && asked.write);
  const { redirectTo } = await oauth.completeAuthorization({
    request: approved.request,
    userId: who.projectId,
    metadata: { grantId },
    scope: grantScopes(toolsets, readOnly),
    props: { grantId },
  });
  await recordGrant(who.db, {
    id: grantId,
    projectId: who.projectId,
    apiKeyId: who.apiKeyId,
    clientId: approved.request.clientId,
    clientName: client.clientName.slice(0, 200),
    redirectHost: client.redirectHost.slice(0, 200),
    resource,
    toolsets,
    readOnly,
    expiresAt: new Date(Date.now() + OAUTH_DEFAULTS.refreshTokenTtlSeconds * 1000),
  });
  approved.headers.set('location', redirectTo);
  return new Response(null, { status: 302, headers: approved.headers });
}

/** The page (or the redirect to the client) for an OAuth error; anything else is thrown on. */
function errorPage(error: unknown): Response {
  if (error instanceof AuthorizationError && error.redirectTo) return Response.redirect(error.redirectTo, 302);
  if (error instanceof AuthorizationError) {
    return page(
      'This request cannot be approved',
      `<p>${escape(error.description)}</p><p>Start the connection again from your client.</p><p><small>OAuth error: ${escape(error.code)}</small></p>`,
      400,
    );
  }
  if (error instanceof CimdFetchError)
    return page('Unknown app', '<p>The app could not be verified: its metadata document could not be read.</p>', 400);
  throw error;
}

/** The authorization request at `url` with its `resource` in canonical form (every spelling of a toolset URL is one resource). */
function canonicalRequestUrl(url: string): string {
  const parsed = new URL(url);
  const resource = parsed.searchParams.get('resource');
  if (resource !== null) parsed.searchParams.set('resource', canonicalResourceParameter(resource, parsed.origin));
  return parsed.href;
}

function consentForm(
  request: AuthRequest,
  details: ConsentDescription,
  handle: string,
  query: string,
  asksForApiKey: boolean,
  problem?: string,
  keyToolsets?: readonly Toolset[],
): string {
  const asked = accessOf(request.scope, toolsetsOfResource(request.resource!));
  const toolsets = asked.toolsets
    .filter((toolset) => !keyToolsets || keyToolsets.includes(toolset))
    .map(
      (toolset) =>
        `<label><input type="checkbox" name="toolset" value="${toolset}" checked> <strong>${toolset}</strong>: ${escape(TOOLSET_PURPOSES[toolset])}</label>`,
    )
    .join('');
  const access = asked.write
    ? '<label><input type="radio" name="access" value="read"> Read-only: only tools that change nothing</label><label><input type="radio" name="access" value="write" checked> Read and write</label>'
    : '<p>Read-only: only tools that change nothing.</p><input type="hidden" name="access" value="read">';
  const name = escape(details.clientName);
  const origin = details.clientDomain
    ? `Published by <strong>${escape(details.clientDomain)}</strong>.`
    : 'The app named itself when it registered: the name is not verified.';
  return `
<h1>Connect ${name} to edge-tools?</h1>
${problem ? `<p role="alert" class="problem">${escape(problem)}</p>` : ''}
<p><strong>${name}</strong> asks to use these tools of a project; you may narrow what it gets. ${origin}</p>
<p>Access will be sent to <strong>${escape(details.redirectHost)}</strong>.</p>
${details.redirectIsLoopback ? '<p class="problem"><strong>This sends access to an app on your computer.</strong> Continue only if you just started connecting from it.</p>' : ''}
<form method="post">
  <input type="hidden" name="handle" value="${escape(handle)}">
  <input type="hidden" name="request" value="${escape(query)}">
  <fieldset><legend>Toolsets</legend>${toolsets}</fieldset>
  <fieldset><legend>Access</legend>${access}</fieldset>
  ${asksForApiKey ? '<p><label for="api_key">API key</label><input id="api_key" name="api_key" type="password" autocomplete="off" required placeholder="et_…"><small>A key of the project the app may use (npm run keys). It is checked, not kept.</small></p>' : ''}
  <p><button type="submit" name="decision" value="approve">Approve</button> <button type="submit" name="decision" value="deny" formnovalidate>Deny</button></p>
</form>`;
}

function page(title: string, body: string, status: number, headers: HeadersInit = {}): Response {
  const response = new Response(
    `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escape(title)}</title><style>${STYLE}</style><main>${body}</main></html>`,
    { status, headers },
  );
  response.headers.set('content-type', 'text/html; charset=utf-8');
  response.headers.set('cache-control', 'no-store');
  // No page of the consent flow may be framed (clickjacking): every one of them, errors included.
  response.headers.set('x-frame-options', 'DENY');
  response.headers.set('content-security-policy', "frame-ancestors 'none'");
  return response;
}

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1b1f24}main{max-width:36rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:8px}' +
  'fieldset{border:1px solid #d0d7de;border-radius:6px;margin:1rem 0}label{display:block;margin:.4rem 0}input[type=password]{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}' +
  'button{font:inherit;padding:.5rem 1.2rem;margin-right:.5rem}.problem{color:#a40e26}';

function escape(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
