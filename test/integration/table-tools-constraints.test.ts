/**
 * What the database's columns and constraints make of a table tool's call, end to end in workerd:
 * log-telegram-checkin's column mapping, CONFLICT on the same user and moment, tenants kept apart by
 * the constraint, and a project_id sent by the model refused.
 */
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { moodEntries, telegramCheckins } from '../../drizzle/schema.ts';
import { callTool, db, tenantB } from './helpers.ts';
import { fieldsOf, mood, moodRowsFor } from './table-tools-fixture.ts';

describe('log-telegram-checkin: column mappings', () => {
  it('writes user_id into telegram_user_id', async () => {
    const { status, body } = await callTool('log-telegram-checkin', {
      user_id: '42424242',
      status: 'ok',
      checked_in_at: '2025-10-05T08:00:00Z',
    });
    expect(status).toBe(200);
    expect(body.message).toBe('Checked in Telegram user 42424242 (ok) at 2025-10-05T08:00:00Z');
    const rows = await db.select().from(telegramCheckins).where(eq(telegramCheckins.telegramUserId, '42424242'));
    expect(rows).toHaveLength(1);
  });
});

describe('constraint violations', () => {
  it('answers CONFLICT naming the fields when the same user logs the same moment twice', async () => {
    const input = mood({ user_id: 'user_conflict' });
    expect((await callTool('log-mood', input)).status).toBe(200);
    const { status, body } = await callTool('log-mood', { ...input, mood: 'sad' });
    expect(status).toBe(409);
    expect(body).toMatchObject({
      success: false,
      error: { code: 'CONFLICT', retryable: false, details: { sqlstate: '23505', constraint: 'mood_entries_user_timestamp_unique' } },
    });
    expect(body.message).toContain('same user_id and timestamp already exists');
    expect(await moodRowsFor('user_conflict')).toHaveLength(1);
  });

  it('keeps tenants apart: another project may log the same user and moment', async () => {
    const input = mood({ user_id: 'user_two_tenants' });
    expect((await callTool('log-mood', input)).status).toBe(200);
    expect((await callTool('log-mood', input, { key: tenantB.apiKey })).status).toBe(200);
    const rows = await db
      .select()
      .from(moodEntries)
      .where(and(eq(moodEntries.userId, 'user_two_tenants'), eq(moodEntries.projectId, tenantB.projectId)));
    expect(rows).toHaveLength(1);
  });

  it('refuses a project_id sent by the model: the tenant comes from the key only', async () => {
    const { status, body } = await callTool('log-mood', mood({ user_id: 'user_spoof', project_id: tenantB.projectId }));
    expect(status).toBe(400);
    expect(fieldsOf(body)[0]).toMatchObject({ field: 'project_id', code: 'unknown_field' });
  });
});
