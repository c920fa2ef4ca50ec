/**
 * submit-health-form end to end in workerd, every data type of a table tool: decimals exact and
 * rounded to the column's scale (the answer and the stored execution say so), nested JSON intact or
 * sent as its JSON text, and each type's refusals, writing nothing.
 */
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { healthForms } from '../../drizzle/schema.ts';
import gateway from '../../functions/gateway.ts';
import type { ExecutionDetail } from '../../shared/observability/executions.ts';
import { callTool, db, getJson, tenantA, tenantB } from './helpers.ts';
import { fieldsOf, healthForm } from './table-tools-fixture.ts';

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
