import { describe, expect, it } from 'vitest';
import { embedText, HASHING_EMBEDDER_DIMENSIONS, HASHING_EMBEDDER_ID } from '../../shared/providers/hashing-embedder.ts';

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
    expect(HASHING_EMBEDDER_ID).toBe('offline-hashing-v1');
    expect(HASHING_EMBEDDER_DIMENSIONS).toBe(1536);
    expect(embedText('Ship it')).toHaveLength(1536);
    expect(embedText('Ship it', 64)).toHaveLength(64);
  });

  it('is deterministic', () => {
    const text = 'Hire a senior backend engineer';
    expect(embedText(text)).toEqual(embedText(text));
    // Pinned: if this changes, every stored vector changes, so HASHING_EMBEDDER_ID must be bumped too.
    const pinned = [0.242536, 0, -0.727607, 0.242536, 0, -0.242536, -0.485071, -0.242536];
    expect([...embedText('Ship the release', 8)].map((x) => Math.round(x * 1e6) / 1e6)).toEqual(pinned);
  });

  it('is L2-normalised', () => {
    for (const text of ['q', 'Renew the SOC 2 audit', 'word '.repeat(500), '日本語のテキスト', 'x']) {
      expect(norm(embedText(text))).toBeCloseTo(1, 6);
    }
  });

  it('scores related task texts clearly above unrelated ones', () => {
    const related = cosine('Hire a senior backend engineer', 'Recruit backend engineers');
    const unrelated = cosine('Hire a senior backend engineer', 'Renew the SOC 2 audit');
    expect(related).toBeGreaterThan(0.35);
    expect(Math.abs(unrelated)).toBeLessThan(0.1);
    expect(related - unrelated).toBeGreaterThan(0.3);
  });

  it('matches stems through character trigrams', () => {
    expect(cosine('Deploy the API', 'Deployment of the API')).toBeGreaterThan(cosine('Deploy the API', 'Document the API'));
    expect(cosine('migrations', 'migration')).toBeGreaterThan(0.5);
    expect(Math.abs(cosine('migrations', 'onboarding'))).toBeLessThan(0.15);
  });

  it('ignores case, Unicode compatibility forms and stop words', () => {
    expect(cosine('BACKEND Engineer', 'backend engineer')).toBeCloseTo(1, 6);
    expect(cosine('ｂａｃｋｅｎｄ', 'backend')).toBeCloseTo(1, 6);
    expect(cosine('the backend engineer', 'backend engineer')).toBeCloseTo(1, 6);
  });

  it('weights repeated words sublinearly', () => {
    const once = cosine('audit', 'audit budget');
    const thrice = cosine('audit', 'audit audit audit budget');
    expect(thrice).toBeGreaterThan(once);
    expect(thrice).toBeLessThan(0.95);
  });

  it('gives the zero vector, never NaN, for text without features', () => {
    for (const text of ['', '   ', '!!! ...', 'the and of']) {
      const v = embedText(text);
      expect(v.every((x) => x === 0)).toBe(true);
    }
    expect(cosine('', 'anything')).toBe(0);
    expect(cosine('', '')).toBe(0);
  });

  it('rejects invalid dimensions', () => {
    expect(() => embedText('x', 0)).toThrow(RangeError);
    expect(() => embedText('x', 1.5)).toThrow(RangeError);
  });
});
