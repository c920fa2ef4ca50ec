import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  embedText,
  HASHING_EMBEDDER_DIMENSIONS,
  HASHING_EMBEDDER_ID,
  HASHING_EMBEDDER_THRESHOLD,
} from '../../shared/providers/hashing-embedder.ts';

function cosine(a: string, b: string): number {
  const x = embedText(a);
  const y = embedText(b);
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]! * y[i]!;
  return s;
}

function norm(v: Float32Array): number {
  return Math.sqrt(v.reduce((s, x) => s + x * x, 0));
}

describe('embedText (offline hashing embedder)', () => {
  it('is labelled and 1536-dimensional by default', () => {
    expect(HASHING_EMBEDDER_ID).toBe('offline-hashing-v2');
    expect(HASHING_EMBEDDER_DIMENSIONS).toBe(1536);
    expect(embedText('Ship it')).toHaveLength(1536);
    expect(embedText('Ship it', 64)).toHaveLength(64);
  });

  it('is deterministic', () => {
    const text = 'Hire a senior backend engineer';
    expect(embedText(text)).toEqual(embedText(text));
    // Pinned: if this changes, every stored vector changes, so HASHING_EMBEDDER_ID must be bumped too.
    const pinned = [0.416667, 0.666667, -0.083333, -0.166667, -0.083333, -0.5, -0.25, 0.166667];
    expect([...embedText('Ship the release', 8)].map((x) => Math.round(x * 1e6) / 1e6)).toEqual(pinned);
  });

  it('is L2-normalised, whatever the text', () => {
    for (const text of ['q', 'Renew the SOC 2 audit', 'word '.repeat(500), '日本語のテキスト', 'the', '???', '🚀']) {
      expect(norm(embedText(text))).toBeCloseTo(1, 6);
    }
  });

  it('gives a non-zero vector, never NaN, for any text with a non-space character', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).filter((text) => /\S/u.test(text)),
        (text) => {
          const vector = embedText(text);
          expect(vector.every(Number.isFinite)).toBe(true);
          expect(norm(vector)).toBeCloseTo(1, 5);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('gives the zero vector only for blank text, and then never NaN', () => {
    for (const text of ['', '   ', '\n\t ']) expect(embedText(text).every((x) => x === 0)).toBe(true);
    expect(cosine('', 'anything')).toBe(0);
  });

  it('finds the same words in other inflections and any order', () => {
    expect(cosine('Hiring backend engineers', 'Hire a backend engineer')).toBeCloseTo(1, 6);
    expect(cosine('engineers backend hiring', 'hire backend engineers')).toBeCloseTo(1, 6);
    expect(cosine('Deploy the API', 'Deployment of the API')).toBeCloseTo(1, 6);
    expect(cosine('migrations', 'migrated')).toBeCloseTo(1, 6);
  });

  it('ignores case, Unicode compatibility forms, accents on Latin letters and stop words', () => {
    expect(cosine('BACKEND Engineer', 'backend engineer')).toBeCloseTo(1, 6);
    expect(cosine('ｂａｃｋｅｎｄ', 'backend')).toBeCloseTo(1, 6);
    expect(cosine('Café menu', 'cafe menu')).toBeCloseTo(1, 6);
    expect(cosine('the backend engineer', 'backend engineer')).toBeCloseTo(1, 6);
    expect(cosine('anything about the tasks related to hiring', 'hiring')).toBeCloseTo(1, 6);
  });

  it('scores one shared content word above the default threshold, unrelated texts below it', () => {
    // A short query and a typical task sharing one word ("revenue"), as bench/retrieval.ts calibrates.
    expect(cosine('increase monthly revenue', 'Revise the pricing page copy with the revenue operations lead')).toBeGreaterThanOrEqual(
      HASHING_EMBEDDER_THRESHOLD,
    );
    expect(cosine('hire backend engineers', 'Interview two backend candidates')).toBeGreaterThanOrEqual(HASHING_EMBEDDER_THRESHOLD);
    for (const [a, b] of [
      ['quantum chromodynamics lattice', 'Hire two backend engineers'],
      ['Hire a senior backend engineer', 'Renew the SOC 2 audit'],
      ['recieve the invoice', 'approve the budget'],
    ] as const) {
      expect(Math.abs(cosine(a, b))).toBeLessThan(HASHING_EMBEDDER_THRESHOLD);
    }
  });

  it('still relates a misspelt word to the right one through its trigrams', () => {
    const misspelt = cosine('recieve the invoice', 'receive the invoice');
    expect(misspelt).toBeGreaterThan(0.5);
    expect(misspelt).toBeLessThan(0.99);
  });

  it('weights repeated words sublinearly', () => {
    const once = cosine('audit', 'audit budget');
    const thrice = cosine('audit', 'audit audit audit budget');
    expect(thrice).toBeGreaterThan(once);
    expect(thrice).toBeLessThan(0.95);
  });

  it('falls back to stop words, then to characters, so such texts still match themselves', () => {
    expect(cosine('the', 'THE')).toBeCloseTo(1, 6);
    expect(cosine('???', '???')).toBeCloseTo(1, 6);
    expect(cosine('🚀', '🚀')).toBeCloseTo(1, 6);
    // ... and nothing that has content words of its own.
    expect(Math.abs(cosine('the', 'the backend engineer'))).toBeLessThan(HASHING_EMBEDDER_THRESHOLD);
    expect(Math.abs(cosine('🚀', '🚀 launch the rocket'))).toBeLessThan(HASHING_EMBEDDER_THRESHOLD);
  });

  it('rejects invalid dimensions', () => {
    expect(() => embedText('x', 0)).toThrow(RangeError);
    expect(() => embedText('x', 1.5)).toThrow(RangeError);
  });
});
