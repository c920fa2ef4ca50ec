/**
 * log-mood's invalid input end to end in workerd, in the words of the seed's testing requirements:
 * one field error per problem (out of range, wrong type, outside the enum, a timestamp without a
 * time zone or an offset Postgres cannot store, blank or unsafe text, null), what a missing field
 * expected, every problem at once, and never a huge value echoed back. Nothing is written.
 */
import { describe, expect, it } from 'vitest';
import { callTool } from './helpers.ts';
import { fieldsOf, mood, moodRowsFor } from './table-tools-fixture.ts';

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
