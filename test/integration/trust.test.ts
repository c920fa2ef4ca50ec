/**
 * Trust when many tenants' agents share a few addresses, through the real gateway in workerd with
 * its default settings (no re-check period forced): unknown keys from an address never lock out a
 * valid key of another tenant from it, the address is not the client's to choose, and a key revoked
 * or narrowed stops every write on its behalf that starts more than a second later, on HTTP, MCP,
 * code mode's calls, `/grants` and the consent page. Each is judged by rows: what was written, and
 * when, against the moment of the change.
 */
import { env } from 'cloudflare:workers';
import { and, eq, gt, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { apiKeys, moodEntries } from '../../drizzle/schema.ts';
import { tools } from '../../functions/registry.ts';
import { createGateway } from '../../shared/http/app.ts';
import { runCodeOver } from './code-mode-helpers.ts';
import { createKey, createProject, createTenant, db, moodRows, send, unknownKey } from './helpers.ts';
import { grantRows, openConsent, ORIGIN, pkce, postConsent, register } from './oauth-flow.ts';

/** The gateway as deployed locally: default options (the client address is this machine's). */
const gateway = createGateway(tools);

/** Sends `path` to the default gateway with `key`, under a namespace of the case's own (its counts of failures stay its own). */
async function post(
  path: string,
  key: string,
  body: unknown,
  { namespace, headers = {} }: { namespace: string; headers?: Record<string, string> },
) {
  const response = await send(
    new Request(`http://edge-tools.test${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify(body),
    }),
    gateway,
    { ...env, CONCURRENCY_NAMESPACE: namespace },
  );
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

const mood = (userId: string) => ({ user_id: userId, mood: 'happy', energy_level: 5, timestamp: '2031-05-01T08:00:00Z' });

describe('no tenant can lock out another from a shared address', () => {
  it('after unknown keys from one address, a never-used key of another tenant from it succeeds at once; forged address headers change nothing', async () => {
    const namespace = `trust-${crypto.randomUUID()}`;
    const forged = (i: number) => ({ 'cf-connecting-ip': `203.0.113.${i % 250}`, 'x-forwarded-for': `198.51.100.${i % 250}` });
    const answers: number[] = [];
    for (let i = 0; i < 60; i++)
      answers.push((await post('/tools/list-plans', unknownKey(), {}, { namespace, headers: forged(i) })).status);
    // Each unknown key cost a lookup until the address's bound, then none: whatever address header it claimed.
    expect(answers.slice(0, 20).every((status) => status === 401)).toBe(true);
    expect(answers.slice(20).every((status) => status === 429)).toBe(true);

    // Another tenant's key, never used before (not cached), from the same address.
    const other = await createTenant('Shared egress');
    const userId = `egress-${crypto.randomUUID()}`;
    const written = await post('/tools/log-mood', other.apiKey, mood(userId), { namespace, headers: forged(99) });
    expect(written.status, JSON.stringify(written.body)).toBe(200);
    expect(await moodRows(other.projectId, userId)).toBe(1);
  });

  it('a key that only looks signed (a forged tag) is refused like any guess, within the bound', async () => {
    const namespace = `trust-${crypto.randomUUID()}`;
    const { apiKey } = await createTenant('Forged tags');
    const forgedTag = `${apiKey.slice(0, -11)}${'A'.repeat(11)}`;
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++)
      statuses.push((await post('/tools/list-plans', forgedTag.slice(0, -2) + String(i).padStart(2, '0'), {}, { namespace })).status);
    expect(statuses.slice(0, 20).every((status) => status === 401)).toBe(true);
    expect(statuses.slice(20).every((status) => status === 429)).toBe(true);
    expect((await post('/tools/list-plans', apiKey, {}, { namespace })).status).toBe(200);
  });
});

/** Milliseconds a change may take to reach every write (docs/auth.md), as the database's clock counts them. */
const FRESHNESS_MS = 1_000;

/**
 * Revokes (or narrows) key `keyId` in the database and answers the database's time of it (epoch
 * ms): every row written on the key's behalf after that time plus the bound is a broken promise.
 */
async function change(keyId: string, how: 'revoke' | 'narrow'): Promise<number> {
  const set = how === 'revoke' ? sql`revoked_at = now()` : sql`toolsets = array['study']::text[]`;
  const [row] = await db
    .execute<{ at: string }>(
      sql`update api_keys set ${set} where id = ${keyId} returning (extract(epoch from clock_timestamp()) * 1000)::bigint::text as at`,
    )
    .then((result) => result.rows);
  return Number(row!.at);
}

/** Mood rows of `projectId` written after `afterMs` (epoch ms, the database's clock). */
async function moodsAfter(projectId: string, afterMs: number): Promise<number> {
  const rows = await db
    .select({ id: moodEntries.id })
    .from(moodEntries)
    .where(and(eq(moodEntries.projectId, projectId), gt(moodEntries.createdAt, new Date(afterMs))));
  return rows.length;
}

describe('one freshness rule, on every surface, with the default settings', { timeout: 60_000 }, () => {
  for (const how of ['revoke', 'narrow'] as const) {
    for (const surface of ['http', 'mcp'] as const) {
      it(`after a key is ${how === 'revoke' ? 'revoked' : 'narrowed to study'}, no ${surface.toUpperCase()} write starts more than a second later`, async () => {
        const projectId = await createProject(`Freshness ${how} ${surface}`);
        const { key, id } = await createKey(projectId);
        const namespace = `trust-${crypto.randomUUID()}`;
        const write = (n: number) =>
          surface === 'http'
            ? post('/tools/log-mood', key, mood(`fresh-${n}`), { namespace })
            : post(
                '/mcp',
                key,
                { jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 'log-mood', arguments: mood(`fresh-${n}`) } },
                { namespace },
              );
        expect((await write(0)).status).toBe(200);
        let changedAt: number | undefined;
        let sentAfterBound = 0;
        for (let n = 1; n < 200; n++) {
          if (n === 5) changedAt = await change(id, how);
          const sentAt = Date.now();
          await write(n);
          if (changedAt !== undefined && sentAt > changedAt + FRESHNESS_MS && ++sentAfterBound >= 5) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(sentAfterBound).toBe(5);
        // The promise, in rows: nothing written on the key's behalf later than the bound after the change.
        expect(await moodsAfter(projectId, changedAt! + FRESHNESS_MS)).toBe(0);
        expect(await moodRows(projectId, 'fresh-0')).toBe(1);
      });
    }
  }

  it("code mode's calls keep it inside one long execution: a key revoked between its writes writes nothing a second later", async () => {
    const projectId = await createProject('Freshness code mode');
    const { key, id } = await createKey(projectId);
    const userId = `code-${crypto.randomUUID()}`;
    const code = `async () => {
      const answers = [];
      for (let n = 0; n < 40; n++) {
        const answer = await tools.logMood(${JSON.stringify({ ...mood(userId), energy_level: 1 })});
        answers.push(answer.success ? "written" : answer.error.code);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return answers;
    }`;
    const running = runCodeOver('http', code, { key });
    // Once the first write landed, the key is revoked while the code keeps writing.
    while ((await moodRows(projectId, userId)) === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const revokedAt = await change(id, 'revoke');
    const { body } = await running;
    const answers = (body as { data?: { result?: string[] } }).data?.result ?? [];
    expect(answers[0]).toBe('written');
    expect(answers.at(-1)).toBe('UNAUTHENTICATED');
    expect(await moodsAfter(projectId, revokedAt + FRESHNESS_MS)).toBe(0);
  });

  it('a grant revoked with a key revoked since is refused: DELETE /grants waits for the gate', async () => {
    const projectId = await createProject('Freshness grants');
    const { key, id } = await createKey(projectId);
    const namespace = `trust-${crypto.randomUUID()}`;
    const listed = await post('/tools/list-plans', key, {}, { namespace });
    expect(listed.status).toBe(200);
    await change(id, 'revoke');
    await new Promise((resolve) => setTimeout(resolve, FRESHNESS_MS + 100));
    const response = await send(
      new Request(`http://edge-tools.test/grants/${crypto.randomUUID()}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${key}` },
      }),
      gateway,
    );
    expect(response.status).toBe(401);
    expect((await db.select().from(apiKeys).where(eq(apiKeys.id, id)))[0]!.revokedAt).not.toBeNull();
  });

  it('a consent approved with a key revoked a second ago records no grant', async () => {
    const projectId = await createProject('Freshness consent');
    const { key, id } = await createKey(projectId);
    const namespace = `trust-${crypto.randomUUID()}`;
    expect((await post('/tools/list-plans', key, {}, { namespace })).status).toBe(200);
    const { clientId } = await register();
    const { challenge } = await pkce();
    const consent = await openConsent({ clientId, resource: `${ORIGIN}/mcp/study`, challenge });
    await change(id, 'revoke');
    await new Promise((resolve) => setTimeout(resolve, FRESHNESS_MS + 100));
    const approved = await postConsent(consent.cookie, {
      ...consent.fields,
      toolset: 'study',
      access: 'write',
      api_key: key,
      decision: 'approve',
    });
    expect(approved.status).not.toBe(302);
    expect(await approved.text()).toContain('The API key was refused');
    expect(await grantRows(projectId)).toBe(0);
  });
});
