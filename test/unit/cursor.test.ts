import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { decodeCursor, encodeCursor } from '../../shared/core/cursor.ts';

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
    expect(decoded).toMatchObject({ ok: false, error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: 'cursor', code: 'invalid_cursor' }] } } });
  });

  it('binds a cursor to the inputs it continues', () => {
    const scope = { task_ids: ['a', 'b'], threshold: 0.5 };
    const cursor = encodeCursor({ after: 3, key: 'k' }, scope);
    expect(decodeCursor(position, cursor, { scope: { task_ids: ['a', 'b'], threshold: 0.5 } })).toEqual({ ok: true, value: { after: 3, key: 'k' } });
    const other = decodeCursor(position, cursor, { scope: { task_ids: ['a', 'c'], threshold: 0.5 } });
    expect(other).toMatchObject({ ok: false, error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: 'cursor' }] } } });
    if (!other.ok) expect(other.error.message).toContain('continues a call with other inputs');
    // A cursor made without a scope does not pass for one made with it.
    expect(decodeCursor(position, encodeCursor({ after: 3, key: 'k' }), { scope }).ok).toBe(false);
  });
});
