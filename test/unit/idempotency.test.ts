import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, keyFromHeader, keyFromMeta } from '../../shared/runtime/idempotency.ts';

/** Rebuilds an object with its keys inserted in reverse order, recursively. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, item]) => [key, reversedKeys(item)]),
  );
}

describe('canonicalJson (the input fingerprint)', () => {
  it('is JSON that parses back to the value, whatever the key order', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        expect(canonicalJson(reversedKeys(value))).toBe(text);
      }),
    );
  });

  it('sorts keys by UTF-16 code units, as RFC 8785 does', () => {
    // RFC 8785 section 3.2.3's sorting example, reduced to its keys.
    const keys = ['\u20ac', '\r', '\ufb33', '1', '\ud83d\ude00', '\u0080', '\u00f6'];
    const expected = ['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33'];
    // Read off the text: JavaScript objects list integer-like keys ('1') first whatever the order.
    expect(canonicalJson(Object.fromEntries(keys.map((key) => [key, 0])))).toBe(
      `{${expected.map((key) => `${JSON.stringify(key)}:0`).join(',')}}`,
    );
  });
});

describe('keyFromHeader', () => {
  it.each([
    ['"8e03978e-40d5-43e8-bc93-6894a57f9324"', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['8e03978e-40d5-43e8-bc93-6894a57f9324', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['"with space"', 'with space'],
    ['"a \\"quoted\\" \\\\ key"', 'a "quoted" \\ key'],
    ['  "padded"  ', 'padded'],
  ])('reads %s', (header, key) => {
    expect(keyFromHeader(header)).toEqual({ ok: true, value: key });
  });

  it.each(['"a\\b"', '"x";param=1', '"one", "two"', 'one, two', '"', '""', `"${'k'.repeat(256)}"`, '"\u00e9"', 'tab\there'])(
    'refuses %s',
    (header) => {
      expect(keyFromHeader(header)).toMatchObject({ ok: false, error: { code: 'VALIDATION_ERROR' } });
    },
  );

  it('is undefined without the header', () => {
    expect(keyFromHeader(null)).toBeUndefined();
  });
});

describe('keyFromMeta', () => {
  it('reads the edge-tools key, ignores other _meta keys, refuses a non-string', () => {
    expect(keyFromMeta({ 'edge-tools/idempotency-key': 'abc', progressToken: 1 })).toEqual({ ok: true, value: 'abc' });
    expect(keyFromMeta({ progressToken: 1 })).toBeUndefined();
    expect(keyFromMeta(undefined)).toBeUndefined();
    expect(keyFromMeta({ 'edge-tools/idempotency-key': ['abc'] })).toMatchObject({ ok: false, error: { code: 'VALIDATION_ERROR' } });
  });
});
