/**
 * OAuth grants in the database: what a person approved for an MCP client (the project, the
 * toolsets, read-only or not), recorded when they approve and checked on every use of the grant's
 * tokens. The tokens themselves live in the OAUTH_KV namespace (shared/auth/oauth.ts); this row
 * is what `npm run keys -- grants` lists and `… revoke-grant` revokes.
 *
 * As API keys are (shared/auth/keys.ts), a live grant is cached per isolate and confirmed within
 * the re-check period (1 s, ./verification.ts) before anything changes state: a grant revoked in
 * the database, or whose approving API key was revoked or narrowed, changes nothing more than a
 * second later, on every isolate.
 */
import { and, desc, eq, gt, isNull, sql } from 'drizzle-orm';
import { apiKeys, oauthGrants, projects } from '../../drizzle/schema.ts';
import { fail, type Failure } from '../core/contract.ts';
import type { Database } from '../core/database.ts';
import type { Caller } from './caller.ts';
import type { Verification } from './gate.ts';
import { VerificationCache, type RecheckContext } from './verification.ts';

/** What approving a client records. */
export interface NewGrant {
  id: string;
  projectId: string;
  apiKeyId: string;
  clientId: string;
  clientName: string;
  redirectHost: string;
  resource: string;
  toolsets: string[];
  readOnly: boolean;
  expiresAt: Date;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Records a grant, and revokes the project's earlier grants to the same client for the same
 * resource: approving a client again replaces what it had (as the OAuth provider does with the
 * earlier grants' tokens).
 */
export async function recordGrant(db: Database, grant: NewGrant): Promise<void> {
  await db.batch([
    db
      .update(oauthGrants)
      .set({ revokedAt: sql`now()` })
      .where(
        and(
          eq(oauthGrants.projectId, grant.projectId),
          eq(oauthGrants.clientId, grant.clientId),
          eq(oauthGrants.resource, grant.resource),
          isNull(oauthGrants.revokedAt),
        ),
      ),
    db.insert(oauthGrants).values(grant),
  ]);
}

/**
 * The caller of a grant's tokens if the grant is live (not revoked, not expired, its approving key
 * not revoked), asked of the database: its project, the key that approved it, and its effective
 * scope. Undefined otherwise; database errors are thrown.
 */
export async function lookUpGrant(db: Database, grantId: string): Promise<Caller | undefined> {
  const [row] = await db
    .select({
      grantId: oauthGrants.id,
      projectId: projects.id,
      projectName: projects.name,
      apiKeyId: oauthGrants.apiKeyId,
      rateLimitPerMinute: projects.rateLimitPerMinute,
      toolsets: oauthGrants.toolsets,
      keyToolsets: apiKeys.toolsets,
      readOnly: oauthGrants.readOnly,
    })
    .from(oauthGrants)
    .innerJoin(projects, eq(projects.id, oauthGrants.projectId))
    .innerJoin(apiKeys, eq(apiKeys.id, oauthGrants.apiKeyId))
    .where(
      and(eq(oauthGrants.id, grantId), isNull(oauthGrants.revokedAt), gt(oauthGrants.expiresAt, sql`now()`), isNull(apiKeys.revokedAt)),
    )
    .limit(1);
  if (!row) return undefined;
  return Object.freeze({
    project: Object.freeze({ id: row.projectId, name: row.projectName }),
    keyId: row.apiKeyId,
    rateLimitPerMinute: row.rateLimitPerMinute,
    toolsets: Object.freeze(effectiveToolsets(row.toolsets, row.keyToolsets)),
    readOnly: row.readOnly,
    credential: 'oauth' as const,
    grantId: row.grantId,
  });
}

/** Live grants verified per isolate, re-checked as API keys are (./verification.ts). */
const verifiedGrants = new VerificationCache<Caller>(() => revokedGrant());

/**
 * The verification of a grant's tokens: from the isolate's cache when it was verified before
 * (confirmed, like a key, within the re-check period: ./verification.ts), else looked up now.
 * UNAUTHENTICATED for a grant that is not live; database errors are thrown.
 */
export async function grantVerification(db: Database, grantId: string, context: RecheckContext): Promise<Verification | Failure> {
  const lookUpAgain = () => lookUpGrant(db, grantId);
  let entry = verifiedGrants.get(grantId);
  if (!entry) {
    const verifiedAt = Date.now();
    const caller = await lookUpAgain();
    if (!caller) return revokedGrant();
    entry = verifiedGrants.remember(grantId, caller, verifiedAt);
  }
  return verifiedGrants.verification(grantId, entry, lookUpAgain, context);
}

/** UNAUTHENTICATED for a token whose grant (or the key that approved it) was revoked since. */
function revokedGrant(): Failure {
  return fail('UNAUTHENTICATED', 'The access token belongs to a grant that was revoked (or whose API key was revoked).', {
    hint: 'Authorize again through your MCP client (it follows the WWW-Authenticate header of this answer), or send an API key: Authorization: Bearer et_…',
    details: { reason: 'invalid_token' },
  });
}

/** What a grant naming `granted` reaches when its approving key reaches `ofKey` (null: every toolset). */
function effectiveToolsets(granted: readonly string[], ofKey: readonly string[] | null): string[] {
  return ofKey === null ? [...granted] : granted.filter((toolset) => ofKey.includes(toolset));
}

/** Grants as `npm run keys -- grants` lists them, newest first (optionally of one project, by id or name). */
export async function listGrants(db: Database, project?: string) {
  const byProject = project === undefined ? undefined : UUID.test(project) ? eq(projects.id, project) : eq(projects.name, project);
  return db
    .select({
      id: oauthGrants.id,
      project: projects.name,
      client: oauthGrants.clientName,
      clientId: oauthGrants.clientId,
      redirectHost: oauthGrants.redirectHost,
      resource: oauthGrants.resource,
      toolsets: oauthGrants.toolsets,
      readOnly: oauthGrants.readOnly,
      approvedWith: apiKeys.keyPrefix,
      createdAt: oauthGrants.createdAt,
      expiresAt: oauthGrants.expiresAt,
      revokedAt: oauthGrants.revokedAt,
    })
    .from(oauthGrants)
    .innerJoin(projects, eq(projects.id, oauthGrants.projectId))
    .innerJoin(apiKeys, eq(apiKeys.id, oauthGrants.apiKeyId))
    .where(byProject)
    .orderBy(desc(oauthGrants.createdAt));
}

/**
 * Revokes a live grant by id (only one of `projectId`'s when given); false when no such live grant
 * exists. Its tokens stop working on every isolate within about a second (the cache's re-check),
 * and its refresh token at once.
 */
export async function revokeGrant(db: Database, grantId: string, { projectId }: { projectId?: string } = {}): Promise<boolean> {
  if (!UUID.test(grantId)) return false;
  const ofProject = projectId === undefined ? undefined : eq(oauthGrants.projectId, projectId);
  const revoked = await db
    .update(oauthGrants)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(oauthGrants.id, grantId), isNull(oauthGrants.revokedAt), ofProject))
    .returning({ id: oauthGrants.id });
  return revoked.length > 0;
}
