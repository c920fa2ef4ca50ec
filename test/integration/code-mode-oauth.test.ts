/**
 * `/mcp/code` as an OAuth protected resource, through the real gateway in workerd on an https
 * origin (as deployed): discovery (RFC 9728 metadata, the `WWW-Authenticate` challenge), a token
 * issued for `/mcp/code` whose code's calls reach only what the grant and its approving key both
 * allow, and tokens of other resources refused there (and its token refused elsewhere). Judged by
 * the rows written.
 */
import { count, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiKeys, chatMessages } from '../../drizzle/schema.ts';
import { createKey, createProject, db, send, moodRows } from './helpers.ts';
import { connect, fetchJson, mcp, ORIGIN, type Json } from './oauth-flow.ts';

let projectId: string;

/** A mood entry of `userId`; the `n`th of them (one per timestamp). */
const mood = (userId: string, n = 0) =>
  JSON.stringify({ user_id: userId, mood: 'sad', energy_level: 5, timestamp: new Date(Date.UTC(2030, 6, 1, 8, 0, n)).toISOString() });

/** Runs `code` with `execute` on /mcp/code with an access token: the HTTP status and the execution's envelope. */
async function execute(token: string, code: string): Promise<{ status: number; envelope?: Json; body: Json }> {
  const answer = await mcp('/mcp/code', token, 'tools/call', { name: 'execute', arguments: { code } });
  return { status: answer.status, envelope: answer.body.result?.structuredContent, body: answer.body };
}

beforeAll(async () => {
  projectId = await createProject('Code mode OAuth');
}, 60_000);

describe('/mcp/code is a protected resource', { timeout: 90_000 }, () => {
  it('without a credential: 401 with a challenge naming its own metadata, which names it and every scope', async () => {
    const refused = await send(
      new Request(`${ORIGIN}/mcp/code`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      }),
    );
    expect(refused.status).toBe(401);
    const challenge = refused.headers.get('www-authenticate')!;
    expect(challenge).toContain(`resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp/code"`);
    expect(challenge).toContain('scope="documents:read documents:write task-analysis:read');
    const metadata = await fetchJson('/.well-known/oauth-protected-resource/mcp/code');
    expect(metadata.status).toBe(200);
    expect(metadata.body).toMatchObject({ resource: `${ORIGIN}/mcp/code`, authorization_servers: [ORIGIN] });
    expect(metadata.body.scopes_supported).toEqual(expect.arrayContaining(['study:write', 'table-tools:read', 'documents:write']));
  });

  it('a token for /mcp/code runs code bounded by its grant: a write outside it is PERMISSION_DENIED and writes nothing; the token works nowhere else', async () => {
    const { key } = await createKey(projectId, { toolsets: ['study', 'table-tools'] });
    const { accessToken, scope } = await connect(`${ORIGIN}/mcp/code`, { apiKey: key, toolsets: ['study', 'table-tools'], access: 'read' });
    expect(scope.split(' ').sort()).toEqual(['study:read', 'table-tools:read']);
    // What the agent reads lists only what the grant may call.
    const listed = await mcp('/mcp/code', accessToken, 'tools/list');
    const description: string = listed.body.result.tools.find((tool: Json) => tool.name === 'execute').description;
    expect(description).toContain('list-plans');
    expect(description).not.toContain('add-document');
    expect(description).not.toContain('log-mood');

    const userId = `oauth-${crypto.randomUUID()}`;
    const { status, envelope } = await execute(
      accessToken,
      `async () => [(await tools.logMood(${mood(userId)})).error?.code, (await tools["add-document"]({ title: "x", content: "# x" })).error?.code, (await tools.listPlans({ limit: 1 })).success]`,
    );
    expect(status).toBe(200);
    expect(envelope!.data.result).toEqual(['PERMISSION_DENIED', 'PERMISSION_DENIED', true]);
    expect(await moodRows(projectId, userId)).toBe(0);

    for (const path of ['/mcp', '/mcp/study', '/mcp/table-tools,study']) {
      const elsewhere = await mcp(path, accessToken, 'tools/list');
      expect(elsewhere.status, path).toBe(401);
      expect(elsewhere.headers.get('www-authenticate'), path).toContain('error="invalid_token"');
    }
    const overHttp = await send(
      new Request(`${ORIGIN}/code`, {
        method: 'POST',
        headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ code: `async () => (await tools.logMood(${mood(userId)})).success` }),
      }),
    );
    expect(overHttp.status).toBe(401);
    expect(await moodRows(projectId, userId)).toBe(0);
  });

  it('a write grant for /mcp/code writes through its code; narrowing the approving key narrows the code, and only accepted calls wrote', async () => {
    const { key, id } = await createKey(projectId, { toolsets: ['study', 'table-tools'] });
    const { accessToken } = await connect(`${ORIGIN}/mcp/code`, { apiKey: key, toolsets: ['table-tools'], access: 'write' });
    const userId = `oauth-${crypto.randomUUID()}`;
    const write = (n: number) =>
      `async () => { const answer = await tools.logMood(${mood(userId, n)}); return answer.success ? "written" : answer.error.code; }`;
    const first = await execute(accessToken, write(0));
    expect(first.envelope!.data.result).toBe('written');
    expect(await moodRows(projectId, userId)).toBe(1);

    // The key loses table-tools: the grant's effective scope (grant ∩ key) follows, within the recheck interval.
    await db
      .update(apiKeys)
      .set({ toolsets: ['study'] })
      .where(eq(apiKeys.id, id));
    let written = 1;
    for (;;) {
      const next = await execute(accessToken, write(written));
      if (next.status !== 200 || next.envelope?.data?.result !== 'written') {
        // The grant now reaches no toolset: the code's call is refused by the gate on the refreshed
        // scope, or the execution is (the gate judges code mode's rule on the confirmed caller too),
        // or (once the isolate knows the narrowed scope) the URL refuses it before any code runs.
        if (next.status !== 200) expect(next.status, JSON.stringify(next.body)).toBe(403);
        else if (next.envelope!.success) expect(next.envelope!.data.result, JSON.stringify(next.body)).toBe('PERMISSION_DENIED');
        else expect(next.envelope!.error.code, JSON.stringify(next.body)).toBe('PERMISSION_DENIED');
        expect(JSON.stringify(next.body)).toContain('PERMISSION_DENIED');
        break;
      }
      written += 1;
    }
    expect(await moodRows(projectId, userId)).toBe(written);
  });

  it('a token for /mcp/study is refused on /mcp/code: 401 invalid_token, nothing written', async () => {
    const { key } = await createKey(projectId);
    const { accessToken } = await connect(`${ORIGIN}/mcp/study`, { apiKey: key, toolsets: ['study'], access: 'write' });
    const messages = async () => (await db.select({ n: count() }).from(chatMessages).where(eq(chatMessages.projectId, projectId)))[0]!.n;
    const before = await messages();
    const refused = await mcp('/mcp/code', accessToken, 'tools/call', {
      name: 'execute',
      arguments: { code: 'async () => tools.saveMessage({ session_id: "oauth-attack", role: "user", content: "must never be written" })' },
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(refused.headers.get('www-authenticate')).toContain('/.well-known/oauth-protected-resource/mcp/code');
    expect(await messages()).toBe(before);
    // On its own URL the same token works.
    expect((await mcp('/mcp/study', accessToken, 'tools/list')).status).toBe(200);
  });
});
