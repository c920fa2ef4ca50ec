/**
 * The bound on unknown keys per client address, across isolates: each isolate is played by a fresh
 * copy of the module (its own per-isolate state), all counting in one Redis.
 */
import { Redis } from '@upstash/redis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startRedisServer, startUpstashStandIn } from '../../local/upstash-rest.ts';

const redisServer = await startRedisServer();
if (!redisServer) console.warn('\n*** redis-server is not installed: SKIPPING the cross-isolate failed-attempts test ***\n');
let standIn: Awaited<ReturnType<typeof startUpstashStandIn>> | undefined;

beforeAll(async () => {
  if (redisServer) standIn = await startUpstashStandIn({ redisPort: redisServer.port, token: 'failures' });
});
afterAll(async () => {
  await standIn?.close();
  await redisServer?.stop();
});

/** A new isolate: the module loaded afresh, so it remembers nothing of the others. */
async function isolate() {
  vi.resetModules();
  const { FailedAttempts } = await import('../../shared/concurrency/rate-limit.ts');
  return (redis?: Redis) => new FailedAttempts({ redis, prefix: `failures-${prefix}`, maxFailures: 5 });
}

let prefix = 0;

describe('FailedAttempts', () => {
  it('blocks an address after the bound in one isolate, and only that address', async () => {
    prefix++;
    const attempts = (await isolate())();
    for (let i = 0; i < 4; i++) await attempts.record('203.0.113.1');
    expect(attempts.blockedFor('203.0.113.1')).toBe(0);
    await attempts.record('203.0.113.1');
    expect(attempts.blockedFor('203.0.113.1')).toBeGreaterThan(0);
    expect(attempts.blockedFor('203.0.113.1')).toBeLessThanOrEqual(60_000);
    expect(attempts.blockedFor('203.0.113.2')).toBe(0);
  });

  it('counts attempts in flight: a burst gets the bound, an attempt that ends uncounted frees its place, ending twice counts once', async () => {
    prefix++;
    const attempts = (await isolate())();
    const taken = Array.from({ length: 8 }, () => attempts.take('203.0.113.5'));
    expect(taken.filter(Boolean)).toHaveLength(5);
    expect(attempts.take('203.0.113.6')).toBeDefined();
    // A lookup that found its key frees its place: another may start.
    await taken[0]!.end(false);
    const next = attempts.take('203.0.113.5');
    expect(next).toBeDefined();
    // Failures count once each, however often they are ended; the address is then blocked.
    for (const attempt of [...taken.slice(1, 5), next]) {
      await attempt!.end(true);
      await attempt!.end(true);
    }
    expect(attempts.blockedFor('203.0.113.5')).toBeGreaterThan(0);
    expect(attempts.take('203.0.113.5')).toBeUndefined();
    expect(attempts.retryAfter('203.0.113.5')).toBeGreaterThan(1_000);
  });

  it.skipIf(!redisServer)('an isolate learns of a block counted elsewhere on the first failure it sees', async () => {
    prefix++;
    const redis = new Redis({ url: standIn!.url, token: standIn!.token, enableTelemetry: false });
    // Five isolates see one failure each: none of them alone reaches the bound of 5.
    const isolates = [];
    for (let i = 0; i < 5; i++) isolates.push((await isolate())(redis));
    for (const attempts of isolates.slice(0, 4)) await attempts.record('198.51.100.9');
    for (const attempts of isolates) expect(attempts.blockedFor('198.51.100.9')).toBe(0);
    await isolates[4]!.record('198.51.100.9');
    expect(isolates[4]!.blockedFor('198.51.100.9')).toBeGreaterThan(0);
    // A sixth isolate, fresh: blocked after its first failure from that address.
    const late = (await isolate())(redis);
    expect(late.blockedFor('198.51.100.9')).toBe(0);
    await late.record('198.51.100.9');
    expect(late.blockedFor('198.51.100.9')).toBeGreaterThan(0);
  });
});
