/**
 * Injected round-trip time for the local stand-ins (local/neon-http.ts, local/upstash-rest.ts).
 * Locally a request to them costs a fraction of a millisecond; deployed, every request a worker
 * sends to Neon or Upstash is a network round trip (5–40 ms to Neon, 1–20 ms to Upstash, more
 * across regions). A stand-in given a round trip holds each answer until that long after its
 * request arrived, so that the worker pays, per request, what a deployment pays:
 *
 * - requests sent in parallel overlap, as on a network: each waits for its own round trip, not
 *   for the others';
 * - one request costs one round trip whatever it carries (a pipeline of Redis commands, a batch of
 *   statements in one transaction);
 * - the stand-in's own work overlaps the wait (an answer goes at the later of the round trip's end
 *   and the work's), so figures read as round trips, not as PGlite's or redis-server's speed.
 *
 * Set by environment variables (default 0: no delay), read by {@link injectedRoundTrips} for
 * `npm run dev`, the benches and the test setup: `LOCAL_NEON_RTT_MS`, `LOCAL_UPSTASH_RTT_MS`, and
 * optionally `LOCAL_NEON_RTT_JITTER_MS`, `LOCAL_UPSTASH_RTT_JITTER_MS` (each request then waits up
 * to that much more, uniformly at random). docs/local-development.md says how to use them.
 */

/** A round trip: every request waits `rttMs`, plus up to `jitterMs` more, at random. */
export interface RoundTrip {
  rttMs: number;
  jitterMs: number;
}

/** No injected delay: the default of every stand-in. */
export const NO_ROUND_TRIP: RoundTrip = Object.freeze({ rttMs: 0, jitterMs: 0 });

/** The environment variables of each stand-in's round trip. */
export const ROUND_TRIP_VARIABLES = {
  neon: { rttMs: 'LOCAL_NEON_RTT_MS', jitterMs: 'LOCAL_NEON_RTT_JITTER_MS' },
  upstash: { rttMs: 'LOCAL_UPSTASH_RTT_MS', jitterMs: 'LOCAL_UPSTASH_RTT_JITTER_MS' },
} as const;

/** The stand-ins that take a round trip. */
export type StandInName = keyof typeof ROUND_TRIP_VARIABLES;

/** The round trip of each stand-in. */
export type RoundTrips = Record<StandInName, RoundTrip>;

/** The longest round trip a variable may ask for: a minute, far above any network's. */
const MAX_ROUND_TRIP_MS = 60_000;

/**
 * The round trips the environment asks for (`LOCAL_NEON_RTT_MS` and the others, in
 * milliseconds; unset or empty means 0). Throws, naming the variable, for anything but a number
 * from 0 to 60,000.
 */
export function injectedRoundTrips(env: Record<string, string | undefined> = process.env): RoundTrips {
  const read = (name: string): number => {
    const raw = env[name]?.trim();
    if (!raw) return 0;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0 || value > MAX_ROUND_TRIP_MS)
      throw new Error(`${name} must be a number of milliseconds from 0 to ${MAX_ROUND_TRIP_MS}, e.g. ${name}=25, but it is '${raw}'.`);
    return value;
  };
  const of = (stand: StandInName): RoundTrip => ({
    rttMs: read(ROUND_TRIP_VARIABLES[stand].rttMs),
    jitterMs: read(ROUND_TRIP_VARIABLES[stand].jitterMs),
  });
  return { neon: of('neon'), upstash: of('upstash') };
}

/** `25 ms`, `25 ms + up to 5 ms`, or `none`. */
export function describeRoundTrip({ rttMs, jitterMs }: RoundTrip): string {
  if (rttMs === 0 && jitterMs === 0) return 'none';
  return jitterMs > 0 ? `${rttMs} ms + up to ${jitterMs} ms` : `${rttMs} ms`;
}

/** `Neon 25 ms, Upstash 8 ms`: the injected round trips, as every bench prints them beside its figures. */
export function describeRoundTrips(roundTrips: RoundTrips): string {
  return `Neon ${describeRoundTrip(roundTrips.neon)}, Upstash ${describeRoundTrip(roundTrips.upstash)}`;
}

/** One request a stand-in served: when it arrived, when its answer went (the stand-in's `performance.now()`), and what it asked. */
export interface ServedRequest {
  arrivedAt: number;
  answeredAt: number;
  /** The URL path it was sent to. */
  path: string;
  /** Its body, as sent (the statements, the Redis commands). */
  body: string;
}

/** What a stand-in has served so far: `GET /__stats` answers it. */
export interface ServedStats {
  /** Requests answered (control requests, such as `/__stats` itself, are not counted). */
  requests: number;
  /** Requests arrived and not answered yet. */
  in_flight: number;
  rtt_ms: number;
  jitter_ms: number;
}

/** The clock a {@link RoundTripDelay} keeps time with (injected by tests). */
export interface DelayClock {
  /** Milliseconds, monotonic. */
  now(): number;
  /** Resolves after about `ms` (a timer may fire early: the delay checks the clock again). */
  wait(ms: number): Promise<void>;
  /** A number in [0, 1). */
  random(): number;
}

/** The process's own clock and timers. */
export const REAL_CLOCK: DelayClock = {
  now: () => performance.now(),
  wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
};

/** A request on its way through a stand-in: when it arrived and when its answer may go. */
export interface Arrival {
  arrivedAt: number;
  releaseAt: number;
}

/**
 * The injected round trip of one stand-in, changeable while it runs ({@link set}), and the count of
 * what it served. The stand-in calls {@link arrive} when a request arrives and {@link release}
 * once its answer is ready; the answer goes when both the work and the round trip are done.
 */
export class RoundTripDelay {
  #roundTrip: RoundTrip;
  readonly #clock: DelayClock;
  #served = 0;
  #inFlight = 0;

  constructor(roundTrip: RoundTrip = NO_ROUND_TRIP, clock: DelayClock = REAL_CLOCK) {
    this.#roundTrip = { ...roundTrip };
    this.#clock = clock;
  }

  /** The round trip requests arriving from now on get. */
  get roundTrip(): RoundTrip {
    return { ...this.#roundTrip };
  }

  /** Changes the round trip of the requests arriving from now on (those already held keep theirs). */
  set(roundTrip: RoundTrip): void {
    this.#roundTrip = { ...roundTrip };
  }

  /** A request arrived: its answer may go one round trip (and its jitter) from now. */
  arrive(): Arrival {
    const { rttMs, jitterMs } = this.#roundTrip;
    const arrivedAt = this.#clock.now();
    this.#inFlight++;
    return { arrivedAt, releaseAt: arrivedAt + rttMs + (jitterMs > 0 ? this.#clock.random() * jitterMs : 0) };
  }

  /** Resolves, with the time it did, once the answer of `arrival` may go; the request then counts as served. */
  async release(arrival: Arrival): Promise<number> {
    for (let left = arrival.releaseAt - this.#clock.now(); left > 0; left = arrival.releaseAt - this.#clock.now()) {
      await this.#clock.wait(left);
    }
    this.#inFlight--;
    this.#served++;
    return this.#clock.now();
  }

  /** What was served so far, and the round trip now. */
  stats(): ServedStats {
    return { requests: this.#served, in_flight: this.#inFlight, rtt_ms: this.#roundTrip.rttMs, jitter_ms: this.#roundTrip.jitterMs };
  }
}

/** The path of the control endpoint each stand-in answers at once, with {@link ServedStats}. */
export const STATS_PATH = '/__stats';
