/**
 * The table tools end to end in workerd against the local Neon stand-in: the seed's testing
 * requirements (validation per type and boundary, execution paths, constraint violations,
 * connection errors, missing tables, error formats and edge cases).
 */
import { env } from 'cloudflare:workers';
import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { healthForms, moodEntries, telegramCheckins, toolExecutions } from '../../drizzle/schema.ts';
import { tableTool } from '../../functions/table-tools/lib/table-tool.ts';
import gateway from '../../functions/gateway.ts';
import { createGateway } from '../../shared/http/app.ts';
import type { FieldError } from '../../shared/core/contract.ts';
import type { ExecutionDetail } from '../../shared/observability/executions.ts';
import { callTool, db, getJson, tenantA, tenantB, uniqueTimestamp } from './helpers.ts';

const mood = (overrides: Record<string, unknown> = {}) => ({
  user_id: 'user_123',
  mood: 'happy',
  energy_level: 7,
  timestamp: uniqueTimestamp(),
  ...overrides,
});

const healthForm = (overrides: Record<string, unknown> = {}) => ({
  patient_name: 'Ada Lovelace',
  age: 36,
  weight_kg: 61.5,
  smoker: false,
  blood_type: 'O+',
  recorded_at: uniqueTimestamp(),
  ...overrides,
});

async function moodRowsFor(userId: string) {
  return db.select().from(moodEntries).where(eq(moodEntries.userId, userId));
}

function fieldsOf(body: { success: boolean; error?: { details?: { fields?: FieldError[] } } }): FieldError[] {
  return body.error?.details?.fields ?? [];
}

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

describe('log-mood: invalid input, in the words of the seed', () => {
  it.each([
    [
      'energy above the range',
      { energy_level: 15 },
      'energy_level',
      'too_big',
      "Field 'energy_level' must be between 1 and 10, but received 15.",
    ],
    [
      'energy below the range',
      { energy_level: 0 },
      'energy_level',
      'too_small',
      "Field 'energy_level' must be between 1 and 10, but received 0.",
    ],
    [
      'a fractional energy',
      { energy_level: 7.5 },
      'energy_level',
      'invalid_type',
      "Field 'energy_level' must be an integer, but received a number (7.5).",
    ],
    [
      'energy as a string',
      { energy_level: '7' },
      'energy_level',
      'invalid_type',
      "Field 'energy_level' must be an integer, but received a string ('7').",
    ],
    [
      'a mood outside the enum',
      { mood: 'excited' },
      'mood',
      'invalid_value',
      "Field 'mood' must be one of: happy, sad, neutral, anxious, but received 'excited'.",
    ],
    [
      'a timestamp without a time zone',
      { timestamp: '2025-10-05T14:30:00' },
      'timestamp',
      'invalid_format',
      "Field 'timestamp' must be an RFC 3339 date-time with seconds and a UTC offset between -15:59 and +15:59, e.g. 2025-10-05T14:30:00Z or 2025-10-05T16:30:00+02:00, but received '2025-10-05T14:30:00' (the time zone is missing: end with Z (UTC) or an offset such as +02:00).",
    ],
    [
      'a timestamp that is not a date',
      { timestamp: 'yesterday' },
      'timestamp',
      'invalid_format',
      "but received 'yesterday' (not in the form YYYY-MM-DDTHH:MM:SS followed by Z or ±HH:MM).",
    ],
    [
      'an offset Postgres cannot store',
      { timestamp: '2025-10-05T14:30:00-23:59' },
      'timestamp',
      'invalid_format',
      '(the UTC offset -23:59 is outside -15:59 to +15:59, which Postgres cannot store).',
    ],
    [
      'an empty user id',
      { user_id: '' },
      'user_id',
      'blank',
      "Field 'user_id' must be text with at least one character other than whitespace, but received an empty string.",
    ],
    [
      'a blank user id',
      { user_id: ' \n ' },
      'user_id',
      'blank',
      "Field 'user_id' must be text with at least one character other than whitespace, but received only whitespace (3 characters).",
    ],
    [
      'a NUL in the user id',
      { user_id: 'a\u0000b' },
      'user_id',
      'unsafe_text',
      "Field 'user_id' must be text without NUL characters (U+0000) or unpaired UTF-16 surrogates, but received 'a\\u0000b', with the NUL character (U+0000) at character 2; remove that character.",
    ],
    [
      'an unpaired surrogate in the notes',
      { notes: 'ok \uD83D' },
      'notes',
      'unsafe_text',
      'an unpaired UTF-16 surrogate (U+D83D) at character 4',
    ],
    ['a null required field', { user_id: null }, 'user_id', 'invalid_type', "Field 'user_id' must be a string, but received null."],
    ['a boolean for text', { notes: true }, 'notes', 'invalid_type', "Field 'notes' must be a string, but received a boolean (true)."],
  ])('refuses %s', async (_case, overrides, field, code, message) => {
    const userId = `user_invalid_${field}_${code}`;
    const { status, body } = await callTool('log-mood', mood({ user_id: userId, ...overrides }));
    expect(status).toBe(400);
    expect(body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR', retryable: false } });
    const [problem] = fieldsOf(body);
    expect(problem).toMatchObject({ field, code });
    expect(problem!.message).toContain(message);
    expect(problem!.expected).toBeTruthy();
    expect(await moodRowsFor(userId)).toHaveLength(0);
  });

  it('reports a missing required field with what was expected', async () => {
    const { user_id: _omitted, ...input } = mood();
    const { body } = await callTool('log-mood', input);
    expect(fieldsOf(body)).toEqual([
      { field: 'user_id', code: 'required', expected: 'a string', message: "Field 'user_id' is required (a string), but it is missing." },
    ]);
  });

  it('lists every problem at once, one entry per field', async () => {
    const { body } = await callTool('log-mood', { user_id: 'user_many', mood: 'ecstatic', energy_level: 99, colour: 'blue' });
    expect(
      fieldsOf(body)
        .map((f) => f.field)
        .sort(),
    ).toEqual(['colour', 'energy_level', 'mood', 'timestamp']);
    expect(body.message).toMatch(/^The input has 4 problems: /);
  });

  it('never echoes a huge value back', async () => {
    const { body } = await callTool('log-mood', mood({ user_id: 'u'.repeat(50_000) }));
    expect(JSON.stringify(body).length).toBeLessThan(3_000);
  });
});

describe('submit-health-form: every data type', () => {
  it('inserts every type, keeping decimals exact and nested JSON intact', async () => {
    const symptoms = { headache: { severity: 3, since: '2025-10-01' }, tags: ['dizzy', 'tired'], fever: null, score: 1.25 };
    const { status, body } = await callTool<{ id: string }>(
      'submit-health-form',
      healthForm({ patient_name: 'Grace Hopper', weight_kg: 72.55, symptoms }),
    );
    expect(status).toBe(200);
    const [row] = await db.select().from(healthForms).where(eq(healthForms.patientName, 'Grace Hopper'));
    expect(row).toMatchObject({
      age: 36,
      weightKg: '72.55',
      smoker: false,
      bloodType: 'O+',
      symptoms,
      notes: '',
      projectId: tenantA.projectId,
    });
    if (body.success) expect(body.data.id).toBe(row!.id);
  });

  it('takes a JSON field as its JSON text too (what strict schemas send), and stores the object', async () => {
    const symptoms = { cough: { days: 4 }, tags: ['dry'], fever: null };
    const { status } = await callTool(
      'submit-health-form',
      healthForm({ patient_name: 'Text Symptoms', symptoms: JSON.stringify(symptoms) }),
    );
    expect(status).toBe(200);
    const [row] = await db.select().from(healthForms).where(eq(healthForms.patientName, 'Text Symptoms'));
    expect(row!.symptoms).toEqual(symptoms);
  });

  it('rounds extra decimals to the scale, as Postgres numeric does, and the answer says what was stored', async () => {
    const { status, body } = await callTool('submit-health-form', healthForm({ patient_name: 'Rounded Weight', weight_kg: 61.555 }));
    expect(status).toBe(200);
    const [row] = await db.select().from(healthForms).where(eq(healthForms.patientName, 'Rounded Weight'));
    expect(row!.weightKg).toBe('61.56');
    if (!body.success) throw new Error(body.message);
    // The answer names the field, what was received and what the row holds, in meta and in words.
    expect(body.meta.warnings).toEqual([
      { code: 'rounded', field: 'weight_kg', received: 61.555, stored: Number(row!.weightKg), message: expect.any(String) },
    ]);
    // The note is a sentence of its own after the configured message, which ends without a full stop.
    expect(body.message).toMatch(
      /^Saved health form for Rounded Weight recorded at \S+Z\. weight_kg 61\.555 was stored as 61\.56 \(2 decimal places kept\)\.$/,
    );
    expect(body.data.message).toBe(body.message);
  });

  it('keeps the warning with the stored execution, as GET /executions/:trace_id reads it back', async () => {
    // Through the worker itself, so that the trace (written after the answer) is in before the read.
    const rounded = await callTool('submit-health-form', healthForm({ patient_name: 'Traced Rounding', weight_kg: 70.125 }), {
      worker: gateway,
    });
    const exact = await callTool('submit-health-form', healthForm({ patient_name: 'Traced Exact', weight_kg: 70.5 }), { worker: gateway });
    const [row] = await db.select().from(healthForms).where(eq(healthForms.patientName, 'Traced Rounding'));
    const said = [
      { code: 'rounded', field: 'weight_kg', received: 70.125, stored: Number(row!.weightKg), message: expect.stringContaining('70.125') },
    ];
    expect(rounded.body.meta.warnings).toEqual(said);

    const trace = await getJson<ExecutionDetail>(`/executions/${rounded.body.meta.trace_id}`, tenantA.apiKey);
    if (!trace.body.success) throw new Error(trace.body.message);
    expect(trace.body.data.warnings).toEqual(said);
    expect(trace.body.data.warnings).toEqual(rounded.body.meta.warnings);
    const untouched = await getJson<ExecutionDetail>(`/executions/${exact.body.meta.trace_id}`, tenantA.apiKey);
    expect(untouched.body).toMatchObject({ success: true, data: { trace_id: exact.body.meta.trace_id, warnings: [] } });
    // Another project does not read it.
    expect((await getJson(`/executions/${rounded.body.meta.trace_id}`, tenantB.apiKey)).status).toBe(404);
  });

  it('says nothing of rounding when the value fits its column', async () => {
    const { body } = await callTool('submit-health-form', healthForm({ patient_name: 'Exact Weight', weight_kg: 61.5 }));
    const [row] = await db.select().from(healthForms).where(eq(healthForms.patientName, 'Exact Weight'));
    expect(row!.weightKg).toBe('61.50');
    expect(body.success).toBe(true);
    expect(body.meta).not.toHaveProperty('warnings');
    expect(body.message).not.toContain('stored as');
  });

  it.each([
    ['too many integer digits', { weight_kg: 1000 }, 'weight_kg', 'between 0.5 and 500'],
    ['a float for an integer', { age: 36.6 }, 'age', 'must be an integer'],
    ['an age above the maximum', { age: 131 }, 'age', 'between 0 and 130, but received 131'],
    ['a string for a boolean', { smoker: 'no' }, 'smoker', 'must be true or false'],
    ['a blood type outside the list', { blood_type: 'C' }, 'blood_type', 'must be one of: A+, A-, B+, B-, AB+, AB-, O+, O-, unknown'],
    [
      'a date before the minimum',
      { recorded_at: '1899-12-31T23:59:59Z' },
      'recorded_at',
      'must be a date-time from 1900-01-01 to 8999-12-31 (its date as written)',
    ],
    [
      'symptoms nested too deep',
      { symptoms: { a: [[[[[[[[1]]]]]]]] } },
      'symptoms',
      'must be a JSON object nested at most 8 levels deep (the object itself is one), but received one that nests 9',
    ],
    ['a NUL in a symptom name', { symptoms: { 'head\u0000ache': 1 } }, 'symptoms.head\\u0000ache', 'must not contain NUL characters'],
    ['a one-letter name', { patient_name: 'A' }, 'patient_name', 'between 2 and 200 characters'],
    [
      'a JSON array for the JSON field',
      { symptoms: ['dizzy', 'tired'] },
      'symptoms',
      "Field 'symptoms' must be a JSON object, or its JSON text, but received an array",
    ],
    [
      'text that is not JSON for the JSON field',
      { symptoms: 'dizzy' },
      'symptoms',
      "Field 'symptoms' must be a JSON object, or its JSON text, but received text that is not JSON",
    ],
    ['the JSON text of an array', { symptoms: '["dizzy"]' }, 'symptoms', 'but received the JSON text of an array'],
    [
      'JSON text with a NUL inside',
      { symptoms: '{"head\\u0000ache": 1}' },
      'symptoms',
      "whose 'head\\u0000ache' is text without NUL characters",
    ],
    ['JSON text nested too deep', { symptoms: '{"a": [[[[[[[[1]]]]]]]]}' }, 'symptoms', 'but received one that nests 9'],
    ['a number for the JSON field', { symptoms: 3 }, 'symptoms', 'must be a JSON object, or its JSON text'],
  ])('refuses %s', async (_case, overrides, field, message) => {
    const { status, body } = await callTool('submit-health-form', healthForm({ patient_name: `Refused ${_case}`, ...overrides }));
    expect(status).toBe(400);
    expect(fieldsOf(body)[0]).toMatchObject({ field });
    expect(fieldsOf(body)[0]!.message).toContain(message);
    expect(
      await db
        .select()
        .from(healthForms)
        .where(eq(healthForms.patientName, `Refused ${_case}`)),
    ).toHaveLength(0);
  });
});

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
