/** The window of GET /metrics: defaults, contradictions refused with the field at fault, and bucket widths. */
import { describe, expect, it } from 'vitest';
import { resolveWindow } from '../../shared/observability/metrics.ts';

const now = new Date('2026-03-10T12:00:00.000Z');

describe('resolveWindow', () => {
  it('defaults to the 24 hours before now, in half-hour buckets', () => {
    expect(resolveWindow({}, now)).toEqual({ since: new Date('2026-03-09T12:00:00.000Z'), until: now, bucketSeconds: 1_800 });
  });

  it.each([
    ['15m', 60],
    ['1h', 60],
    ['2h', 300],
    ['24h', 1_800],
    ['7d', 10_800],
    ['30d', 43_200],
    ['90d', 604_800],
  ])('window=%s uses %i-second buckets, at most 60 of them', (window, bucketSeconds) => {
    const resolved = resolveWindow({ window }, now);
    if ('ok' in resolved) throw new Error(resolved.error.message);
    expect(resolved.bucketSeconds).toBe(bucketSeconds);
    expect((resolved.until.getTime() - resolved.since.getTime()) / (bucketSeconds * 1000)).toBeLessThanOrEqual(60);
  });

  it('ends a window at until, and takes since and until as given', () => {
    expect(resolveWindow({ window: '1h', until: '2026-01-01T10:00:00Z' }, now)).toMatchObject({
      since: new Date('2026-01-01T09:00:00Z'),
      until: new Date('2026-01-01T10:00:00Z'),
    });
    expect(resolveWindow({ since: '2026-01-01T00:00:00+02:00', until: '2026-01-01T06:00:00Z' }, now)).toMatchObject({
      since: new Date('2025-12-31T22:00:00Z'),
      bucketSeconds: 900,
    });
  });

  it('answers a window starting in the future, without an end, as an empty window', () => {
    const since = new Date('2026-03-11T00:00:00Z');
    expect(resolveWindow({ since: since.toISOString() }, now)).toMatchObject({ since, until: since });
    expect(resolveWindow({ window: '15s' }, now)).toMatchObject({ since: new Date(now.getTime() - 15_000), until: now, bucketSeconds: 60 });
  });

  it.each([
    [{ window: '1h', since: '2026-01-01T00:00:00Z' }, 'window'],
    [{ since: '2026-01-01T00:00:00Z', until: '2026-01-01T00:00:00Z' }, 'since'],
    [{ window: '401d' }, 'window'],
    [{ since: '2020-01-01T00:00:00Z' }, 'since'],
  ])('refuses %o naming %s', (query, field) => {
    const resolved = resolveWindow(query, now);
    expect(resolved).toMatchObject({ ok: false, error: { code: 'VALIDATION_ERROR', details: { fields: [{ field }] } } });
  });
});
