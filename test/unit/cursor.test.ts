import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { cursorField, decodeCursor, encodeCursor } from '../../shared/core/cursor.ts';
import { validateInput } from '../../shared/core/validation.ts';

const position = z.strictObject({ after: z.int().min(0), key: z.string() });

describe('cursors', () => {
  it('round-trip a position, unicode included, as URL-safe text', () => {
    const cursor = encodeCursor({ after: 120, key: 'é✓' });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(position, cursor)).toEqual({ ok: true, value: { after: 120, key: 'é✓' } });
  });

  it.each([
    ['not base64', '%%%'],
    ['base64 of something that is not JSON', btoa('nope')],
    ['a position of another shape', encodeCursor({ after: -1, key: 'x' })],
  ])('refuses %s with VALIDATION_ERROR on the cursor field', (_case, cursor) => {
    const decoded = decodeCursor(position, cursor);
    expect(decoded).toMatchObject({
      ok: false,
      error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: 'cursor', code: 'invalid_cursor' }] } },
    });
  });

  it('binds a cursor to the inputs it continues', () => {
    const scope = { task_ids: ['a', 'b'], threshold: 0.5 };
    const cursor = encodeCursor({ after: 3, key: 'k' }, scope);
    expect(decodeCursor(position, cursor, { scope: { task_ids: ['a', 'b'], threshold: 0.5 } })).toEqual({
      ok: true,
      value: { after: 3, key: 'k' },
    });
    const other = decodeCursor(position, cursor, { scope: { task_ids: ['a', 'c'], threshold: 0.5 } });
    expect(other).toMatchObject({ ok: false, error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: 'cursor' }] } } });
    if (!other.ok) expect(other.error.message).toContain('continues a call with other inputs');
    // A cursor made without a scope does not pass for one made with it.
    expect(decodeCursor(position, encodeCursor({ after: 3, key: 'k' }), { scope }).ok).toBe(false);
  });

  describe('the cursor field', () => {
    const input = z.strictObject({ cursor: cursorField.optional() });
    const advertised = new Ajv2020().compile(z.toJSONSchema(input, { io: 'input' }));

    it.each([
      ['spaces', 'Spanish B1 exam'],
      ['padding', `${encodeCursor({ after: 1 })}=`],
      ['an emoji', '😀'],
      ['a standard base64 character', 'ab+c'],
      ['empty', ''],
    ])('leaves a cursor with %s to the tool, which refuses it as one it did not make', (_case, cursor) => {
      // Only the tool can read a cursor: its form is part of that (a data-dependent refusal, as docs/schemas.md lists).
      expect(validateInput(input, { cursor }, '').ok).toBe(true);
      expect(advertised({ cursor })).toBe(true);
      expect(decodeCursor(position, cursor)).toMatchObject({
        ok: false,
        error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: 'cursor', code: 'invalid_cursor' }] } },
      });
    });

    it('refuses a cursor too long before the tool runs, as its advertised schema says', () => {
      const cursor = 'a'.repeat(1_001);
      expect(validateInput(input, { cursor }, '')).toMatchObject({ ok: false, error: { details: { fields: [{ field: 'cursor' }] } } });
      expect(advertised({ cursor })).toBe(false);
    });

    it('takes every cursor encodeCursor makes, as its advertised schema does', () => {
      for (const cursor of [
        encodeCursor({ after: 120, key: 'é✓' }),
        encodeCursor({ before: ['2026-11-22T19:15:45.171000Z', crypto.randomUUID()] }),
      ]) {
        expect(validateInput(input, { cursor }, '').ok).toBe(true);
        expect(advertised({ cursor })).toBe(true);
      }
    });
  });
});
