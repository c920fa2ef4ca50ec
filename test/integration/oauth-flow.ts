/**
 * The OAuth client of test/support/oauth-client.ts bound to the real gateway in workerd, on an
 * https origin (as deployed), approving with tenant A's key unless told otherwise; and the row
 * counts the OAuth tests judge by. Shared by oauth.test.ts, the auth-attacks-*.test.ts files and
 * the code mode tests.
 */
import { count, eq } from 'drizzle-orm';
import { flashcards, oauthGrants } from '../../drizzle/schema.ts';
import { oauthClient } from '../support/oauth-client.ts';
import { db, send, tenantA } from './helpers.ts';

export { base64url, pkce, REDIRECT, type Authorization, type Json } from '../support/oauth-client.ts';

export const ORIGIN = 'https://edge-tools.test';

export const { fetchJson, register, authorizeQuery, openConsent, postConsent, approve, tokenRequest, exchangeCode, connect, mcp } =
  oauthClient({
    origin: ORIGIN,
    send: (request) => send(request),
    apiKey: tenantA.apiKey,
  });

export const grantRows = async (projectId: string) =>
  (await db.select({ n: count() }).from(oauthGrants).where(eq(oauthGrants.projectId, projectId)))[0]!.n;
export const cardCount = async () =>
  (await db.select({ n: count() }).from(flashcards).where(eq(flashcards.projectId, tenantA.projectId)))[0]!.n;
