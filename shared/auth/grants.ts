/**
 * OAuth grants in the database: what a person approved for an MCP client (the project, the
 * toolsets, read-only or not), recorded when they approve and checked on every use of the grant's
 * tokens. The tokens themselves live in the OAUTH_KV namespace (shared/auth/oauth.ts); this row
 * is what `npm run keys -- grants` lists and `… revoke-grant` revokes.
 *
 * As API keys are (shared/auth/keys.ts), a live grant is cached per isolate and re-checked
 * after `recheckAfterMs` (1 s): a grant revoked in the database, or whose approving API key was
 * revoked, stops working everywhere within about a second plus one query.
 */
import { and, desc, eq, gt, isNull, sql } from 'drizzle-orm';
import { apiKeys, oauthGrants, projects } from '../../drizzle/schema.ts';
import type { Database } from '../core/database.ts';
import type { Project } from '../core/tool.ts';

/** Defaults of the grant cache. */
export const GRANT_CACHE_DEFAULTS = {
  /** A grant verified this recently is used without asking the database. */
  recheckAfterMs: 1_000,
  /** Grants cached per isolate; more clear the cache. */
  maxCachedGrants: 1_000,
};

/** A live grant, as its tokens' calls see it. */
export interface LiveGrant {
  grantId: string;
  project: Project;
  /** The API key whose holder approved it. */
  apiKeyId: string;
  rateLimitPerMinute: number | null;
  /** The toolsets its tokens reach now: those it names that the approving key still reaches (possibly none). */
  toolsets: string[];
  /** Whether its tokens may only run tools that do not write. */
  readOnly: boolean;
}

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

const verified = new Map<string, { grant: LiveGrant; verifiedAt: number }>();

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
 * The grant if it is live (not revoked, not expired, its approving key not revoked), from the
 * isolate's cache when verified within `recheckAfterMs`. Database errors are thrown.
 */
export async function liveGrant(
  db: Database,
  grantId: string,
  options: Partial<typeof GRANT_CACHE_DEFAULTS> = {},
): Promise<LiveGrant | undefined> {
  const { recheckAfterMs, maxCachedGrants } = { ...GRANT_CACHE_DEFAULTS, ...options };
  const cached = verified.get(grantId);
  if (cached && Date.now() - cached.verifiedAt < recheckAfterMs) return cached.grant;
  const verifiedAt = Date.now();
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
  if (!row) {
    verified.delete(grantId);
    return undefined;
  }
  const grant: LiveGrant = {
    grantId: row.grantId,
    project: { id: row.projectId, name: row.projectName },
    apiKeyId: row.apiKeyId,
    rateLimitPerMinute: row.rateLimitPerMinute,
    toolsets: effectiveToolsets(row.toolsets, row.keyToolsets),
    readOnly: row.readOnly,
  };
  if (verified.size >= maxCachedGrants) verified.clear();
  verified.set(grantId, { grant, verifiedAt });
  return grant;
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
