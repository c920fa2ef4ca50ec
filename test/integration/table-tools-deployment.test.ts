/**
 * A table tool's deployment problems end to end in workerd, each answered for what it is: a table
 * or mapped column that does not exist, a table without an id uuid column or its unique
 * constraint, a broken configuration (CONFIG_ERROR), an unreachable database (DATABASE_ERROR, the
 * write unconfirmed) and other constraint violations (DATABASE_ERROR with sqlstate and constraint).
 */
import { env } from 'cloudflare:workers';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { tableTool } from '../../functions/table-tools/lib/table-tool.ts';
import { createGateway } from '../../shared/http/app.ts';
import { db, tenantA, uniqueTimestamp } from './helpers.ts';

describe('deployment problems', () => {
  async function callWith(tool: ReturnType<typeof tableTool>, input: unknown, databaseUrl = env.DATABASE_URL) {
    const { createExecutionContext, waitOnExecutionContext } = await import('cloudflare:test');
    const ctx = createExecutionContext();
    // The key stays verified for the whole file: otherwise a call more than a second after the last one
    // re-checks the key in the database, and the unreachable-database case would fail there instead.
    const options = { retryDelayMs: 10, settleWritesMs: 100, auth: { recheckAfterMs: 600_000, maxStaleMs: 600_000 } };
    const response = await createGateway([tool], options).fetch(
      new Request(`http://edge-tools.test/tools/${tool.id}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenantA.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(input),
      }),
      { ...env, DATABASE_URL: databaseUrl },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  }

  const field = { name: 'note', label: 'Note', dataType: 'text', required: true } as const;

  it('answers CONFIG_ERROR table_not_found when the table does not exist', async () => {
    const tool = tableTool({
      toolId: 'log-nowhere',
      displayName: 'x',
      recordName: 'record',
      description: 'x',
      tableName: 'no_such_table',
      fields: [field],
    });
    const { status, body } = await callWith(tool, { note: 'hi' });
    expect(status).toBe(500);
    expect(body.error).toMatchObject({
      code: 'CONFIG_ERROR',
      retryable: false,
      details: { reason: 'table_not_found', table: 'no_such_table' },
    });
  });

  it('answers CONFIG_ERROR column_not_found when a mapped column does not exist', async () => {
    const tool = tableTool({
      toolId: 'log-bad-column',
      displayName: 'x',
      recordName: 'record',
      description: 'x',
      tableName: 'mood_entries',
      fields: [field],
      columnMappings: { note: 'no_such_column' },
    });
    const { status, body } = await callWith(tool, { note: 'hi' });
    expect(status).toBe(500);
    expect(body.error).toMatchObject({
      code: 'CONFIG_ERROR',
      details: { reason: 'column_not_found', missing_columns: ['no_such_column'] },
    });
  });

  it('answers CONFIG_ERROR when the table has no id uuid column, or no unique constraint on it, and writes nothing', async () => {
    await db.execute(sql`create table if not exists notes_without_id (note text not null)`);
    await db.execute(sql`create table if not exists notes_without_key (id uuid not null, note text not null)`);
    const toolFor = (tableName: string) =>
      tableTool({ toolId: 'log-note', displayName: 'x', recordName: 'note', description: 'x', tableName, fields: [field] });

    const noId = await callWith(toolFor('notes_without_id'), { note: 'hi' });
    expect(noId.status).toBe(500);
    expect(noId.body.error).toMatchObject({ code: 'CONFIG_ERROR', details: { reason: 'id_column_missing', table: 'notes_without_id' } });
    const noKey = await callWith(toolFor('notes_without_key'), { note: 'hi' });
    expect(noKey.status).toBe(500);
    expect(noKey.body.error).toMatchObject({ code: 'CONFIG_ERROR', details: { reason: 'unique_constraint_missing' } });
    const { rows } = await db.execute(
      sql`select (select count(*) from notes_without_id)::int + (select count(*) from notes_without_key)::int as n`,
    );
    expect(rows[0]).toEqual({ n: 0 });
  });

  it('answers CONFIG_ERROR naming the mistake when the configuration itself is broken', async () => {
    const tool = tableTool({
      toolId: 'log-broken',
      displayName: 'x',
      recordName: 'record',
      description: 'x',
      tableName: 'mood_entries',
      fields: [{ name: 'level', label: 'Level', dataType: 'integer', min: 10, max: 1 }],
    });
    const { status, body } = await callWith(tool, { level: 5 });
    expect(status).toBe(500);
    expect(body.error.code).toBe('CONFIG_ERROR');
    expect(body.error.message).toContain("field 'level': 'min' (10) is greater than 'max' (1)");
  });

  it('answers DATABASE_ERROR, unconfirmed with the key to repeat it with, when the database cannot be reached past the settling', async () => {
    const tool = tableTool({
      toolId: 'log-unreachable',
      displayName: 'x',
      recordName: 'record',
      description: 'x',
      tableName: 'unreachable_table',
      fields: [field],
    });
    await callWith(tool, { note: 'verifies the API key, so the unreachable database is not asked for it' });
    const { status, body } = await callWith(tool, { note: 'hi' }, 'postgres://edge:edge@127.0.0.1:9/edge');
    expect(status).toBe(500);
    expect(body.error).toMatchObject({
      code: 'DATABASE_ERROR',
      retryable: false,
      details: { reason: 'write_unconfirmed', idempotency_key: body.meta.trace_id },
    });
    expect(body.meta.attempts).toBeGreaterThan(3);
    expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|stack/);
  });

  it('answers DATABASE_ERROR with sqlstate and constraint for other constraint violations', async () => {
    const tool = tableTool({
      toolId: 'log-unchecked-energy',
      displayName: 'x',
      recordName: 'record',
      description: 'x',
      tableName: 'mood_entries',
      fields: [
        { name: 'user_id', label: 'User', dataType: 'text', required: true },
        { name: 'mood', label: 'Mood', dataType: 'text', required: true },
        { name: 'energy_level', label: 'Energy', dataType: 'integer', required: true },
        { name: 'timestamp', label: 'When', dataType: 'datetime', required: true },
      ],
    });
    const { status, body } = await callWith(tool, { user_id: 'user_check', mood: 'happy', energy_level: 99, timestamp: uniqueTimestamp() });
    expect(status).toBe(500);
    expect(body.error).toMatchObject({
      code: 'DATABASE_ERROR',
      retryable: false,
      details: { sqlstate: '23514', constraint: 'mood_entries_energy_level_check' },
    });
    expect(JSON.stringify(body)).not.toMatch(/insert into|stack/i);
  });
});
