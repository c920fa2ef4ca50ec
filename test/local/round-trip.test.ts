/**
 * The round trip injected into the stand-ins (local/round-trip.ts): when an answer may go, judged
 * on a clock the test drives (no timer of this machine decides anything), and on the real
 * stand-ins, where an answer never goes before its round trip, whatever the machine's load: a
 * delay can only be longer.
 */
import { Redis } from '@upstash/redis';
import { afterAll, describe, expect, it } from 'vitest';
import { startNeonStandIn, type NeonStandIn } from '../../local/neon-http.ts';
import {
  injectedRoundTrips,
  RoundTripDelay,
  STATS_PATH,
  type DelayClock,
  type ServedRequest,
  type ServedStats,
} from '../../local/round-trip.ts';
import { startRedisServer, startUpstashStandIn } from '../../local/upstash-rest.ts';

/** A clock that moves only when the test says: timers fire when it reaches their time (the first one `early` ms before it). */
function manualClock({ random = 0, early = 0 } = {}) {
  let time = 0;
  let timers: { at: number; fire(): void }[] = [];
  let firstEarly = early;
  const clock: DelayClock = {
    now: () => time,
    wait: (ms) =>
      new Promise<void>((resolve) => {
        timers.push({ at: time + ms - firstEarly, fire: resolve });
        firstEarly = 0;
      }),
    random: () => random,
  };
  /** Moves the clock to `to` and lets every timer due by then fire (and what they start run). */
  const advanceTo = async (to: number) => {
    time = to;
    for (let due = timers.filter((timer) => timer.at <= time); due.length > 0; due = timers.filter((timer) => timer.at <= time)) {
      timers = timers.filter((timer) => timer.at > time);
      for (const timer of due) timer.fire();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { clock, advanceTo };
}

/** Releases `arrival`, recording when (on the clock) it was let go. */
function track(delay: RoundTripDelay, arrival: ReturnType<RoundTripDelay['arrive']>, released: number[]) {
  return delay.release(arrival).then((at) => void released.push(at));
}

describe('RoundTripDelay, on a clock the test drives', () => {
  it('lets no answer go before its round trip since arrival, and overlaps requests held at once', async () => {
    const { clock, advanceTo } = manualClock();
    const delay = new RoundTripDelay({ rttMs: 10, jitterMs: 0 }, clock);
    const released: number[] = [];
    const held = [track(delay, delay.arrive(), released)];
    await advanceTo(1);
    held.push(track(delay, delay.arrive(), released));
    await advanceTo(2);
    held.push(track(delay, delay.arrive(), released));
    expect(delay.stats()).toMatchObject({ requests: 0, in_flight: 3 });

    await advanceTo(9);
    expect(released).toEqual([]);
    await advanceTo(10);
    expect(released).toEqual([10]);
    // Each waits for its own round trip only: the three are out by 12, not one after another (by 30).
    await advanceTo(11);
    await advanceTo(12);
    await Promise.all(held);
    expect(released).toEqual([10, 11, 12]);
    expect(delay.stats()).toEqual({ requests: 3, in_flight: 0, rtt_ms: 10, jitter_ms: 0 });
  });

  it('lets an answer go as soon as its work is done when the work took longer than the round trip', async () => {
    const { clock, advanceTo } = manualClock();
    const delay = new RoundTripDelay({ rttMs: 10, jitterMs: 0 }, clock);
    const arrival = delay.arrive();
    await advanceTo(15); // the stand-in's own work ends here
    expect(await delay.release(arrival)).toBe(15);
  });

  it('waits again when a timer fires before the round trip has passed', async () => {
    const { clock, advanceTo } = manualClock({ early: 3 });
    const delay = new RoundTripDelay({ rttMs: 10, jitterMs: 0 }, clock);
    const released: number[] = [];
    const held = track(delay, delay.arrive(), released);
    await advanceTo(7); // the first timer fires 3 ms early
    expect(released).toEqual([]);
    await advanceTo(10);
    await held;
    expect(released).toEqual([10]);
  });

  it('adds the jitter drawn for each request, and applies a new round trip to requests arriving after it', async () => {
    const { clock, advanceTo } = manualClock({ random: 0.5 });
    const delay = new RoundTripDelay({ rttMs: 10, jitterMs: 4 }, clock);
    expect(delay.arrive()).toEqual({ arrivedAt: 0, releaseAt: 12 });
    delay.set({ rttMs: 0, jitterMs: 0 });
    await advanceTo(5);
    expect(delay.arrive()).toEqual({ arrivedAt: 5, releaseAt: 5 });
    expect(delay.roundTrip).toEqual({ rttMs: 0, jitterMs: 0 });
  });
});

describe('injectedRoundTrips', () => {
  it('reads the four variables, each 0 when unset or empty', () => {
    expect(injectedRoundTrips({ LOCAL_NEON_RTT_MS: '25', LOCAL_UPSTASH_RTT_MS: '8', LOCAL_NEON_RTT_JITTER_MS: '' })).toEqual({
      neon: { rttMs: 25, jitterMs: 0 },
      upstash: { rttMs: 8, jitterMs: 0 },
    });
    expect(injectedRoundTrips({ LOCAL_UPSTASH_RTT_JITTER_MS: '2.5' })).toEqual({
      neon: { rttMs: 0, jitterMs: 0 },
      upstash: { rttMs: 0, jitterMs: 2.5 },
    });
  });

  it('refuses anything but a number of milliseconds, naming the variable', () => {
    expect(() => injectedRoundTrips({ LOCAL_NEON_RTT_MS: '25ms' })).toThrow(/LOCAL_NEON_RTT_MS must be a number of milliseconds.*'25ms'/);
    expect(() => injectedRoundTrips({ LOCAL_UPSTASH_RTT_JITTER_MS: '-1' })).toThrow(/LOCAL_UPSTASH_RTT_JITTER_MS/);
  });
});

const RTT_MS = 40;

/** Sends `send` and answers how long the caller waited for its answer, on the caller's own clock. */
async function waited(send: () => Promise<unknown>): Promise<number> {
  const sentAt = performance.now();
  await send();
  return performance.now() - sentAt;
}

describe('the Neon stand-in with a round trip', () => {
  const served: ServedRequest[] = [];
  let neon: NeonStandIn | undefined;
  afterAll(() => neon?.close());

  const query = (body: unknown) =>
    fetch(`${neon!.url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
      async (response) => {
        expect(response.status).toBe(200);
        return response.json();
      },
    );

  it('holds every answer for the round trip, counts a batch as one request, and says what it served', async () => {
    neon = await startNeonStandIn({ roundTrip: { rttMs: RTT_MS, jitterMs: 0 }, onServed: (request) => served.push(request) });
    const waits = await Promise.all([
      waited(() => query({ query: 'select 1 as one', params: [] })),
      waited(() => query({ query: 'select $1::int as two', params: ['2'] })),
      waited(() => query({ queries: [{ query: 'select 1' }, { query: 'select 2' }, { query: 'select 3' }] })),
    ]);
    for (const wait of waits) expect(wait).toBeGreaterThanOrEqual(RTT_MS);
    expect(served).toHaveLength(3);
    for (const request of served) expect(request.answeredAt - request.arrivedAt).toBeGreaterThanOrEqual(RTT_MS);
    expect(served.map((request) => request.path)).toEqual(['/sql', '/sql', '/sql']);
    expect(served.some((request) => request.body.includes('"queries"'))).toBe(true);

    const stats = (await (await fetch(`http://127.0.0.1:${neon.port}${STATS_PATH}`)).json()) as ServedStats;
    expect(stats).toEqual({ requests: 3, in_flight: 0, rtt_ms: RTT_MS, jitter_ms: 0 });
  });
});

const redisServer = await startRedisServer();
if (!redisServer) console.warn('\n*** redis-server is not installed: SKIPPING the Upstash stand-in round-trip test ***\n');

describe.skipIf(!redisServer)('the Upstash stand-in with a round trip', () => {
  afterAll(() => redisServer?.stop());

  it('holds every answer for the round trip, a pipeline of commands included, and counts requests', async () => {
    const served: ServedRequest[] = [];
    const upstash = await startUpstashStandIn({
      redisPort: redisServer!.port,
      token: 'test-token',
      roundTrip: { rttMs: RTT_MS, jitterMs: 0 },
      onServed: (request) => served.push(request),
    });
    try {
      const redis = new Redis({ url: upstash.url, token: 'test-token', enableTelemetry: false, enableAutoPipelining: false });
      const pipelined = redis.pipeline().set('a', '1').incr('b').get('a');
      const waits = await Promise.all([waited(() => pipelined.exec()), waited(() => redis.set('c', '3'))]);
      for (const wait of waits) expect(wait).toBeGreaterThanOrEqual(RTT_MS);
      expect(served.map((request) => request.path).sort()).toEqual(['/', '/pipeline']);
      for (const request of served) expect(request.answeredAt - request.arrivedAt).toBeGreaterThanOrEqual(RTT_MS);
      const stats = (await (await fetch(upstash.url + STATS_PATH)).json()) as ServedStats;
      expect(stats).toEqual({ requests: 2, in_flight: 0, rtt_ms: RTT_MS, jitter_ms: 0 });
    } finally {
      await upstash.close();
    }
  });
});
