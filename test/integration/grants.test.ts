/**
 * `GET /grants` and `DELETE /grants/:grant_id` (the dashboard's connected clients), against the
 * real gateway in workerd and its database: each project sees and revokes its own grants only,
 * with an API key. (That a revoked grant's tokens stop working, end to end with real tokens, is
 * shown by the dashboard's browser test.)
 */
import { and, eq, isNull } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { apiKeys, oauthGrants } from '../../drizzle/schema.ts';
import { hashApiKey } from '../../shared/auth/keys.ts';
import { recordGrant } from '../../shared/auth/grants.ts';
import { db, send, tenantA, tenantB } from './helpers.ts';

type Project = typeof tenantA;

/** Records a live grant of `project` to a client named `client`, as approving it does. */
async function grantOf(project: Project, client: string, expiresInMs = 86_400_000): Promise<string> {
  const [key] = await db
    .select({ id: apiKeys.id })
    .from(apiKeys)
    .where(eq(apiKeys.keyHash, await hashApiKey(project.apiKey)));
  const id = crypto.randomUUID();
  await recordGrant(db, {
    id,
    projectId: project.projectId,
    apiKeyId: key!.id,
    clientId: `client-${id}`,
    clientName: client,
    redirectHost: '127.0.0.1:7777',
    resource: `http://edge-tools.test/mcp/study/${id}`,
    toolsets: ['study'],
    readOnly: true,
    expiresAt: new Date(Date.now() + expiresInMs),
  });
  return id;
}

async function request(method: string, path: string, key: string) {
  const response = await send(new Request(`http://edge-tools.test${path}`, { method, headers: { authorization: `Bearer ${key}` } }));
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

const isLive = async (id: string) =>
  (
    await db
      .select({ id: oauthGrants.id })
      .from(oauthGrants)
      .where(and(eq(oauthGrants.id, id), isNull(oauthGrants.revokedAt)))
  ).length === 1;

describe('connected clients', { timeout: 60_000 }, () => {
  it("lists the project's live grants only: not another project's, not an expired one", async () => {
    const mine = await grantOf(tenantA, 'Listed agent');
    const expired = await grantOf(tenantA, 'Expired agent', -1_000);
    const theirs = await grantOf(tenantB, 'Other tenant agent');
    const { status, body } = await request('GET', '/grants', tenantA.apiKey);
    expect(status).toBe(200);
    const ids = body.data.grants.map((grant: { grant_id: string }) => grant.grant_id);
    expect(ids).toContain(mine);
    expect(ids).not.toContain(expired);
    expect(ids).not.toContain(theirs);
    expect(body.data.grants.find((grant: { grant_id: string }) => grant.grant_id === mine)).toMatchObject({
      client: 'Listed agent',
      toolsets: ['study'],
      read_only: true,
      approved_with: tenantA.apiKey.slice(0, 8),
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
  });

  it("revokes the project's own grant, and refuses another project's with NOT_FOUND, leaving it live", async () => {
    const mine = await grantOf(tenantA, 'Revoked agent');
    const theirs = await grantOf(tenantB, 'Untouched agent');

    const refused = await request('DELETE', `/grants/${theirs}`, tenantA.apiKey);
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe('NOT_FOUND');
    expect(await isLive(theirs)).toBe(true);

    const revoked = await request('DELETE', `/grants/${mine}`, tenantA.apiKey);
    expect(revoked.status).toBe(200);
    expect(revoked.body.data).toEqual({ grant_id: mine, revoked: true });
    expect(await isLive(mine)).toBe(false);
    const listed = await request('GET', '/grants', tenantA.apiKey);
    expect(listed.body.data.grants.map((grant: { grant_id: string }) => grant.grant_id)).not.toContain(mine);

    // Revoking twice finds nothing live.
    expect((await request('DELETE', `/grants/${mine}`, tenantA.apiKey)).status).toBe(404);
  });

  it('needs a valid key', async () => {
    const id = await grantOf(tenantA, 'Guarded agent');
    expect((await request('GET', '/grants', 'et_not-a-real-key-at-all')).status).toBe(401);
    expect((await request('DELETE', `/grants/${id}`, 'et_not-a-real-key-at-all')).status).toBe(401);
    expect(await isLive(id)).toBe(true);
  });
});
