import { describe, expect, it } from 'vitest';
import { z } from 'zod';
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
});
