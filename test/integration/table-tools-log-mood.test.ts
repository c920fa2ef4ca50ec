/**
 * log-mood's valid calls end to end in workerd against the local Neon stand-in: the row inserted
 * with the tenant from the key, both ends of the energy range, unicode, the notes' length limit,
 * null and missing alike, the same instant in any time zone, the execution traced, and links to the
 * row only where the deployment has a URL template for its table.
 */
import { env } from 'cloudflare:workers';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { toolExecutions } from '../../drizzle/schema.ts';
import gateway from '../../functions/gateway.ts';
import { callTool, db, tenantA } from './helpers.ts';
import { mood, moodRowsFor } from './table-tools-fixture.ts';

describe('log-mood: valid calls', () => {
  it('inserts the row, tenant from the key, and answers id, row_count and a message with context', async () => {
    const input = mood({ user_id: 'user_valid', timestamp: '2025-10-05T14:30:00Z', notes: 'Slept well' });
    const { status, body } = await callTool<{ id: string; row_count: number; message: string }>('log-mood', input);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      success: true,
      message: 'Logged mood entry for user_valid at 2025-10-05T14:30:00Z',
      data: { row_count: 1, message: 'Logged mood entry for user_valid at 2025-10-05T14:30:00Z' },
    });
    const rows = await moodRowsFor('user_valid');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ projectId: tenantA.projectId, mood: 'happy', energyLevel: 7, notes: 'Slept well' });
    if (body.success) expect(rows[0]!.id).toBe(body.data.id);
  });

  it('accepts both ends of the energy range', async () => {
    for (const energy_level of [1, 10]) {
      const { status } = await callTool('log-mood', mood({ user_id: 'user_bounds', energy_level }));
      expect(status).toBe(200);
    }
    expect(await moodRowsFor('user_bounds')).toHaveLength(2);
  });

  it('stores unicode text unchanged', async () => {
    const notes = 'Ça va 😊 — 気分は良い, ñandú, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢';
    const { status } = await callTool('log-mood', mood({ user_id: 'user_unicode', notes }));
    expect(status).toBe(200);
    expect((await moodRowsFor('user_unicode'))[0]!.notes).toBe(notes);
  });

  it('accepts notes of exactly the maximum length and refuses one more character', async () => {
    expect((await callTool('log-mood', mood({ user_id: 'user_maxlen', notes: 'é'.repeat(500) }))).status).toBe(200);
    const { status, body } = await callTool('log-mood', mood({ user_id: 'user_maxlen', notes: 'é'.repeat(501) }));
    expect(status).toBe(400);
    expect(body.message).toBe("Field 'notes' must be at most 500 characters, but received 501 characters.");
  });

  it('treats a missing optional field and null alike, and keeps an empty string', async () => {
    await callTool('log-mood', mood({ user_id: 'user_null_missing' }));
    await callTool('log-mood', mood({ user_id: 'user_null_missing', notes: null }));
    await callTool('log-mood', mood({ user_id: 'user_null_missing', notes: '' }));
    const notes = (await moodRowsFor('user_null_missing')).map((row) => row.notes).sort();
    expect(notes).toEqual(['', null, null]);
  });

  it('stores the same instant whatever the time zone of the timestamp', async () => {
    const { status } = await callTool('log-mood', mood({ user_id: 'user_tz', timestamp: '2031-06-01T16:30:00+02:00' }));
    expect(status).toBe(200);
    const [row] = await moodRowsFor('user_tz');
    expect(new Date(row!.timestamp).toISOString()).toBe('2031-06-01T14:30:00.000Z');
  });

  it('records the execution in the trace', async () => {
    const { createExecutionContext, waitOnExecutionContext } = await import('cloudflare:test');
    const ctx = createExecutionContext();
    const response = await gateway.fetch(
      new Request('http://edge-tools.test/tools/log-mood', {
        method: 'POST',
        headers: { authorization: `Bearer ${tenantA.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(mood({ user_id: 'user_traced' })),
      }),
      env,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    const body = (await response.json()) as { meta: { trace_id: string } };
    const [trace] = await db.select().from(toolExecutions).where(eq(toolExecutions.id, body.meta.trace_id));
    expect(trace).toMatchObject({
      tool: 'log-mood',
      status: 'success',
      projectId: tenantA.projectId,
      attempts: 1,
      performanceWarning: false,
    });
    expect(trace!.input).toMatchObject({ user_id: 'user_traced' });
  });
});

describe('links to the row inserted', () => {
  it('come only when the deployment has a URL template for the table: no fake URLs', async () => {
    const without = await callTool<{ id: string }>('log-mood', mood({ user_id: 'user_unlinked' }));
    expect(without.body.success).toBe(true);
    expect(without.body).not.toHaveProperty('links');

    const { createExecutionContext, waitOnExecutionContext } = await import('cloudflare:test');
    const ctx = createExecutionContext();
    const response = await gateway.fetch(
      new Request('http://edge-tools.test/tools/log-mood', {
        method: 'POST',
        headers: { authorization: `Bearer ${tenantA.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(mood({ user_id: 'user_linked' })),
      }),
      {
        ...env,
        TABLE_URL_TEMPLATES: '{"mood_entries": "https://app.example.com/moods/{id}", "health_forms": "https://app.example.com/forms/{id}"}',
      },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    const body = (await response.json()) as { data: { id: string }; links: { label: string; url: string }[] };
    const [row] = await moodRowsFor('user_linked');
    expect(body.data.id).toBe(row!.id);
    expect(body.links).toEqual([{ label: `Mood entry ${row!.id}`, url: `https://app.example.com/moods/${row!.id}` }]);
  });
});
