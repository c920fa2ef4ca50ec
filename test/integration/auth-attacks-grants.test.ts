/**
 * Attacks on an OAuth grant's reach, through the real gateway in workerd (OAuth on an https origin,
 * as deployed), counted in rows and in what the token lists and calls: a key limited to a toolset
 * approving a wider grant, a key narrowed or revoked after approving, and a grant revoked while
 * calls run. Nothing beyond the approving key may be reached or written.
 */
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { apiKeys, oauthGrants } from '../../drizzle/schema.ts';
import { createKey, createProject, db, send } from './helpers.ts';
import { callOverMcp, DOCUMENT, grantRowOf, listed, MOOD, rowsOf, STUDY_TOOL } from './auth-attacks-fixture.ts';
import { connect, exchangeCode, mcp, openConsent, ORIGIN, pkce, postConsent, register, tokenRequest } from './oauth-flow.ts';

let projectId: string;
/** The rows an attack could write in the file's project. */
const rows = () => rowsOf(projectId);

beforeAll(async () => {
  projectId = await createProject('Auth attacks');
}, 60_000);

// Each test runs whole authorizations (several requests each) on a shared, busy machine.
describe('a grant never reaches further than the key that approved it', { timeout: 90_000 }, () => {
  it('a key limited to study cannot approve documents, table-tools or write beyond it: the form is narrowed to the key and says so', async () => {
    const { key } = await createKey(projectId, { toolsets: ['study'] });
    const before = await rows();
    const { clientId } = await register();
    const { verifier, challenge } = await pkce();
    const consent = await openConsent({ clientId, resource: `${ORIGIN}/mcp`, challenge });
    // Every toolset is offered while the key is unknown.
    expect(consent.html).toContain('value="documents"');
    const wider = await postConsent(consent.cookie, {
      ...consent.fields,
      toolset: ['documents', 'table-tools', 'study'],
      access: 'write',
      api_key: key,
      decision: 'approve',
    });
    expect(wider.status).toBe(400);
    expect(wider.headers.get('location')).toBeNull();
    const page = await wider.text();
    expect(page).toContain('may grant only study');
    expect(page).toContain('value="study"');
    expect(page).not.toContain('value="documents"');
    expect(page).not.toContain('value="table-tools"');
    expect(await rows()).toEqual(before);

    // Approved again within the key: a grant of study only.
    const approved = await postConsent(consent.cookie, {
      ...consent.fields,
      toolset: 'study',
      access: 'write',
      api_key: key,
      decision: 'approve',
    });
    expect(approved.status).toBe(302);
    const code = new URL(approved.headers.get('location')!).searchParams.get('code')!;
    const tokens = await exchangeCode({ clientId, code, verifier, resource: `${ORIGIN}/mcp` });
    expect(tokens.body.scope).toBe('study:read study:write');
    expect((await grantRowOf(clientId)).toolsets).toEqual(['study']);
    const { names } = await listed('/mcp', tokens.body.access_token);
    expect(names).toContain(STUDY_TOOL);
    expect(names).not.toContain('add-document');
    expect(names).not.toContain('log-mood');
    for (const [name, args] of [
      ['add-document', DOCUMENT],
      ['log-mood', MOOD],
    ] as const) {
      const refused = await callOverMcp('/mcp', tokens.body.access_token, name, args);
      expect(refused.envelope, name).toMatchObject({ success: false, error: { code: 'PERMISSION_DENIED' } });
    }

    // A grant row wider than its key (as recorded before grants were bounded) still reaches only the
    // key's toolsets. The row is made read-only too, so that the listing shows when the grant was read again.
    await db
      .update(oauthGrants)
      .set({ toolsets: ['documents', 'task-analysis', 'table-tools', 'study'], readOnly: true })
      .where(eq(oauthGrants.clientId, clientId));
    await vi.waitFor(async () => expect((await listed('/mcp', tokens.body.access_token)).names).not.toContain('create-flashcard'), {
      timeout: 5_000,
      interval: 100,
    });
    const widened = (await listed('/mcp', tokens.body.access_token)).names!;
    expect(widened).toContain(STUDY_TOOL);
    expect(widened).not.toContain('semantic-search');
    expect(widened).not.toContain('add-document');
    const outside = await callOverMcp('/mcp', tokens.body.access_token, 'semantic-search', { query: 'attack' });
    expect(outside.envelope).toMatchObject({
      success: false,
      error: { code: 'PERMISSION_DENIED', details: { reason: 'toolset_not_granted' } },
    });
    expect(await rows()).toEqual({ ...before, liveGrants: before.liveGrants + 1 });
  });

  it('a key narrowed after approving narrows its grant within about a second; narrowed to nothing, the grant reaches nothing', async () => {
    const { key, id } = await createKey(projectId);
    const before = await rows();
    const grant = await connect(`${ORIGIN}/mcp`, { apiKey: key, toolsets: ['documents', 'study'] });
    expect((await listed('/mcp', grant.accessToken)).names).toContain('add-document');
    await db
      .update(apiKeys)
      .set({ toolsets: ['study'] })
      .where(eq(apiKeys.id, id));
    await vi.waitFor(async () => expect((await listed('/mcp', grant.accessToken)).names).not.toContain('add-document'), {
      timeout: 5_000,
      interval: 100,
    });
    expect((await listed('/mcp', grant.accessToken)).names).toContain(STUDY_TOOL);
    expect((await callOverMcp('/mcp', grant.accessToken, 'add-document', DOCUMENT)).envelope).toMatchObject({
      error: { code: 'PERMISSION_DENIED', details: { reason: 'toolset_not_granted' } },
    });

    await db
      .update(apiKeys)
      .set({ toolsets: ['table-tools'] })
      .where(eq(apiKeys.id, id));
    await vi.waitFor(async () => expect((await mcp('/mcp', grant.accessToken, 'tools/list')).status).toBe(403), {
      timeout: 5_000,
      interval: 100,
    });
    const refused = await mcp('/mcp', grant.accessToken, 'tools/list');
    expect(refused.body.error).toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'approving_key_narrowed' } });
    expect((await callOverMcp('/mcp', grant.accessToken, 'log-mood', MOOD)).status).toBe(403);
    expect(await rows()).toEqual({ ...before, liveGrants: before.liveGrants + 1 });
  });

  it('a key revoked after approving stops its access tokens and its refresh token', async () => {
    const { key, id } = await createKey(projectId);
    const before = await rows();
    const grant = await connect(`${ORIGIN}/mcp/study`, { apiKey: key, toolsets: ['study'] });
    expect((await listed('/mcp/study', grant.accessToken)).status).toBe(200);
    await db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, id));
    await vi.waitFor(async () => expect((await listed('/mcp/study', grant.accessToken)).status).toBe(401), {
      timeout: 5_000,
      interval: 100,
    });
    const refresh = await tokenRequest({ grant_type: 'refresh_token', refresh_token: grant.refreshToken, client_id: grant.clientId });
    expect(refresh).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(refresh.body.access_token).toBeUndefined();
    expect((await callOverMcp('/mcp/study', grant.accessToken, 'create-flashcard', { front: 'a', back: 'b' })).status).toBe(401);
    expect(await rows()).toEqual({ ...before, liveGrants: before.liveGrants + 1 });
  });

  it('a grant revoked while calls run: every call the revocation did not precede is refused, and only accepted calls wrote', async () => {
    const { key } = await createKey(projectId);
    const grant = await connect(`${ORIGIN}/mcp/documents`, { apiKey: key, toolsets: ['documents'] });
    const before = await rows();
    const { grant_id } = { grant_id: (await grantRowOf(grant.clientId)).id };
    const calls = Array.from({ length: 4 }, (_, i) =>
      callOverMcp('/mcp/documents', grant.accessToken, 'add-document', { ...DOCUMENT, title: `Racing ${i}` }),
    );
    const revoked = send(new Request(`${ORIGIN}/grants/${grant_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } }));
    const answers = await Promise.all(calls);
    expect((await revoked).status).toBe(200);
    const accepted = answers.filter((answer) => answer.envelope?.success === true).length;
    expect((await rows()).documents).toBe(before.documents + accepted);
    await vi.waitFor(async () => expect((await listed('/mcp/documents', grant.accessToken)).status).toBe(401), {
      timeout: 5_000,
      interval: 100,
    });
    expect((await callOverMcp('/mcp/documents', grant.accessToken, 'add-document', DOCUMENT)).status).toBe(401);
    expect(
      (await tokenRequest({ grant_type: 'refresh_token', refresh_token: grant.refreshToken, client_id: grant.clientId })).body.error,
    ).toBe('invalid_grant');
    expect((await rows()).documents).toBe(before.documents + accepted);
  });
});
