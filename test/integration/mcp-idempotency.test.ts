/**
 * The idempotency key of a tools/call in `_meta` (`edge-tools/idempotency-key`), with the official
 * clients of both SDK generations (mcp-fixture.ts): replay, the key shared with HTTP's
 * Idempotency-Key, mismatch, a call still running, scope per project, and key syntax. Rows are
 * counted. (The HTTP header: the idempotency-*.test.ts files.)
 */
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { db, gatedTool, send, tenantA, tenantB, uniqueTimestamp } from './helpers.ts';
import { closeClients, connectWith, envelopeOf, SDKS, textOf, type ConnectOptions } from './mcp-fixture.ts';

afterEach(closeClients);

describe.each(SDKS)('$name', ({ sdk }) => {
  const connect = (options?: ConnectOptions) => connectWith(sdk, options);

  describe('MCP: idempotency key in _meta', () => {
    const IDEMPOTENCY = 'edge-tools/idempotency-key';
    const moodCall = (userId: string, key: unknown, overrides: Record<string, unknown> = {}) => ({
      name: 'log-mood',
      arguments: { user_id: userId, mood: 'happy', energy_level: 5, timestamp: timestampOf(userId), ...overrides },
      _meta: { [IDEMPOTENCY]: key },
    });
    const timestamps = new Map<string, string>();
    const timestampOf = (userId: string) => timestamps.get(userId) ?? timestamps.set(userId, uniqueTimestamp()).get(userId)!;
    const rows = async (userId: string) =>
      (await db.execute(sql`select count(*)::int as n from mood_entries where project_id = ${tenantA.projectId} and user_id = ${userId}`))
        .rows[0];

    it('replays the first answer for the same key and arguments, marked replayed, writing nothing', async () => {
      const client = await connect();
      const userId = `mcp_idem_${crypto.randomUUID().slice(0, 8)}`;
      const key = crypto.randomUUID();
      const first = envelopeOf(await client.callTool(moodCall(userId, key)));
      const again = envelopeOf(await client.callTool(moodCall(userId, key)));
      expect(first.success).toBe(true);
      expect(again).toMatchObject({
        success: true,
        data: first.success ? first.data : {},
        meta: { replayed: true, trace_id: first.meta.trace_id },
      });
      expect(await rows(userId)).toEqual({ n: 1 });
    });

    it('shares the key with HTTP: the same call sent once over each is one execution', async () => {
      const userId = `mcp_idem_${crypto.randomUUID().slice(0, 8)}`;
      const key = crypto.randomUUID();
      const call = moodCall(userId, key);
      const http = await send(
        new Request('http://edge-tools.test/tools/log-mood', {
          method: 'POST',
          headers: { authorization: `Bearer ${tenantA.apiKey}`, 'content-type': 'application/json', 'idempotency-key': `"${key}"` },
          body: JSON.stringify(call.arguments),
        }),
      );
      expect(http.status).toBe(200);
      const mcp = envelopeOf(await (await connect()).callTool(call));
      expect(mcp.meta.replayed).toBe(true);
      expect(await rows(userId)).toEqual({ n: 1 });
    });

    it('refuses the same key with other arguments: IDEMPOTENCY_MISMATCH', async () => {
      const client = await connect();
      const userId = `mcp_idem_${crypto.randomUUID().slice(0, 8)}`;
      const key = crypto.randomUUID();
      await client.callTool(moodCall(userId, key));
      const result = await client.callTool(moodCall(userId, key, { energy_level: 9 }));
      expect(result.isError).toBe(true);
      expect(envelopeOf(result)).toMatchObject({ success: false, error: { code: 'IDEMPOTENCY_MISMATCH', retryable: false } });
      expect(textOf(result)).toContain('IDEMPOTENCY_MISMATCH');
      expect(await rows(userId)).toEqual({ n: 1 });
    });

    it('answers CONFLICT, retryable, while the first call with the key still runs', async () => {
      const { gateway, started, open } = gatedTool();
      const client = await connect({ worker: gateway });
      const call = { name: 'gated-write', arguments: { value: 1 }, _meta: { [IDEMPOTENCY]: crypto.randomUUID() } };
      const first = client.callTool(call);
      await started(1);
      const concurrent = await client.callTool(call);
      expect(envelopeOf(concurrent)).toMatchObject({
        success: false,
        error: { code: 'CONFLICT', retryable: true, details: { reason: 'idempotency_key_in_use' } },
      });
      expect(textOf(concurrent)).toMatch(/Retryable: yes, after \d+ ms/);
      open();
      expect(envelopeOf(await first).success).toBe(true);
      expect(envelopeOf(await client.callTool(call)).meta.replayed).toBe(true);
    });

    it("keeps each project's keys apart: tenant B's same key and arguments is another call", async () => {
      const userId = `mcp_idem_${crypto.randomUUID().slice(0, 8)}`;
      const key = crypto.randomUUID();
      const a = envelopeOf(await (await connect()).callTool(moodCall(userId, key)));
      const b = envelopeOf(await (await connect({ key: tenantB.apiKey })).callTool(moodCall(userId, key)));
      expect(a.success && b.success).toBe(true);
      expect(b.meta.replayed).toBeUndefined();
      expect(await rows(userId)).toEqual({ n: 1 });
      const { rows: inB } = await db.execute(
        sql`select count(*)::int as n from mood_entries where project_id = ${tenantB.projectId} and user_id = ${userId}`,
      );
      expect(inB[0]).toEqual({ n: 1 });
    });

    it('refuses a key that is not a string of 1 to 255 printable ASCII characters', async () => {
      const client = await connect();
      for (const key of [42, '', 'k'.repeat(256)]) {
        const userId = `mcp_idem_${crypto.randomUUID().slice(0, 8)}`;
        const result = await client.callTool(moodCall(userId, key));
        expect(envelopeOf(result)).toMatchObject({
          success: false,
          error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: `_meta.${IDEMPOTENCY}`, code: 'invalid_idempotency_key' }] } },
        });
        expect(await rows(userId)).toEqual({ n: 0 });
      }
    });
  });
});
