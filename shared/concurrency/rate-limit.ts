/**
 * Per-API-key rate limiting with @upstash/ratelimit (sliding window).
 *
 * Fails OPEN, on purpose: when Redis is slow or down, calls pass (and a warning is logged). The rate
 * limit is a fairness and cost guard; the safety invariant (at most N concurrent executions) belongs
 * to the semaphore, which fails closed on the same outage. A rate limiter that also failed closed
 * would only add a second, earlier refusal for the same cause.
 */
import { Ratelimit } from '@upstash/ratelimit';
import type { Redis } from '@upstash/redis';
import { fail, type Failure } from '../core/contract.ts';
import { log } from '../core/log.ts';

export const RATE_LIMIT_DEFAULTS = {
  /** Calls per minute per API key when the project sets no limit of its own. Generous by design. */
  perMinute: 600,
  /** After this, the check gives up and lets the call pass (fail-open). */
  timeoutMs: 1_000,
  prefix: 'edge-tools:ratelimit',
  /** Keys remembered per isolate as over their limit; past it they are forgotten (Redis still limits them). */
  maxBlockedKeys: 10_000,
};

// Identifiers that exhausted their window, kept per isolate so a flood is refused without Redis
// (@upstash/ratelimit's ephemeral cache, which forgets an entry only when it is asked about it
// again): at most RATE_LIMIT_DEFAULTS.maxBlockedKeys. Plain data, no I/O: safe at module scope.
const blockedUntil = new Map<string, number>();

export interface RateLimitCheck {
  redis: Redis;
  /** Who is limited: the API key's id. */
  identifier: string;
  perMinute?: number;
  timeoutMs?: number;
  prefix?: string;
}

/** Undefined when the call may proceed, RATE_LIMITED otherwise. Never throws. */
export async function checkRateLimit({
  redis,
  identifier,
  perMinute = RATE_LIMIT_DEFAULTS.perMinute,
  timeoutMs = RATE_LIMIT_DEFAULTS.timeoutMs,
  prefix = RATE_LIMIT_DEFAULTS.prefix,
}: RateLimitCheck): Promise<Failure | undefined> {
  if (blockedUntil.size >= RATE_LIMIT_DEFAULTS.maxBlockedKeys) blockedUntil.clear();
  const limiter = new Ratelimit({
    redis,
    limiter: Ratelimit.slidingWindow(perMinute, '60 s'),
    prefix: `${prefix}:${perMinute}`,
    timeout: timeoutMs,
    ephemeralCache: blockedUntil,
    analytics: false,
    enableTelemetry: false,
  });
  let result;
  try {
    result = await limiter.limit(identifier);
  } catch (error) {
    log('warn', 'rate_limit_unavailable', { identifier, error: String(error) });
    return undefined;
  }
  if (result.reason === 'timeout') log('warn', 'rate_limit_timeout', { identifier, timeout_ms: timeoutMs });
  if (result.success) return undefined;
  const retryAfterMs = Math.max(0, result.reset - Date.now());
  return fail(
    'RATE_LIMITED',
    `This API key made more than ${perMinute} calls in the last minute. Wait ${Math.ceil(retryAfterMs / 1000)} s before calling again.`,
    {
      hint: 'Space calls out, or batch work into fewer calls.',
      details: { retry_after_ms: retryAfterMs, limit_per_minute: perMinute },
    },
  );
}

/** Defaults of {@link FailedAttempts}. */
export const FAILED_ATTEMPTS_DEFAULTS = {
  /** Unknown keys a client address may try per window before it gets 429. */
  maxFailures: 20,
  windowMs: 60_000,
  /** The Redis count gives up after this (and the isolate's own count still applies). */
  timeoutMs: 1_000,
  prefix: 'edge-tools:auth-failures',
  /** Addresses tracked per isolate; past it the oldest window is forgotten. */
  maxAddresses: 10_000,
};

// Per isolate: failures in the current window, and addresses blocked until a time (from either count),
// keyed by prefix and address (two counts with different prefixes never block each other).
// Plain data, no I/O: safe at module scope.
const failureWindows = new Map<string, { count: number; resetAt: number }>();
const blockedAddresses = new Map<string, number>();
// Attempts taken and not yet ended, per prefix and address: they count against the bound while
// in flight, so that a burst cannot outrun it. An entry goes when its last attempt ends.
const inFlight = new Map<string, number>();

/** One attempt taken with {@link FailedAttempts.take}: end it once, saying whether it counts. */
export interface Attempt {
  /** Frees the attempt's place; `counts` (a failed lookup, a registration made) counts it against the address. Never rejects; later calls do nothing. */
  end(counts: boolean): Promise<void>;
}

/**
 * A bound on what one client address may do per window (its address as the deployment knows
 * it): lookups of unknown keys, so that guessing keys cannot make the database work, and OAuth
 * client registrations. Work that may count is first taken ({@link take}), so that attempts in
 * flight count too and a burst cannot outrun the bound; a blocked address is refused before any
 * further work. Counted in this isolate, and across isolates in Redis when there is one
 * (@upstash/ratelimit, fixed window): an isolate learns of a block from Redis on the first count
 * it makes for that address.
 */
export class FailedAttempts {
  private readonly options: typeof FAILED_ATTEMPTS_DEFAULTS;
  private readonly limiter: Ratelimit | undefined;

  constructor({ redis, ...options }: { redis?: Redis } & Partial<typeof FAILED_ATTEMPTS_DEFAULTS> = {}) {
    this.options = { ...FAILED_ATTEMPTS_DEFAULTS, ...options };
    const { maxFailures, windowMs, timeoutMs, prefix } = this.options;
    this.limiter = redis
      ? new Ratelimit({
          redis,
          limiter: Ratelimit.fixedWindow(maxFailures, `${windowMs} ms`),
          prefix,
          timeout: timeoutMs,
          analytics: false,
          enableTelemetry: false,
        })
      : undefined;
  }

  /**
   * One of `address`'s attempts in this window, taken before the work that may count starts;
   * undefined when the address has none left (its counts in this window and its attempts in
   * flight reach the bound, or Redis said it is blocked). End it with {@link Attempt.end}.
   */
  take(address: string): Attempt | undefined {
    const id = `${this.options.prefix}:${address}`;
    const window = failureWindows.get(id);
    const counted = window && window.resetAt > Date.now() ? window.count : 0;
    const pending = inFlight.get(id) ?? 0;
    if (this.blockedFor(address) > 0 || counted + pending >= this.options.maxFailures) return undefined;
    inFlight.set(id, pending + 1);
    let ended = false;
    return {
      end: async (counts) => {
        if (ended) return;
        ended = true;
        const left = (inFlight.get(id) ?? 1) - 1;
        if (left > 0) inFlight.set(id, left);
        else inFlight.delete(id);
        if (counts) await this.record(address);
      },
    };
  }

  /** Milliseconds until `address` may be given an attempt again, for an answer's retry-after (at least 1 s). */
  retryAfter(address: string): number {
    const window = failureWindows.get(`${this.options.prefix}:${address}`);
    return Math.max(this.blockedFor(address), window ? window.resetAt - Date.now() : 0, 1_000);
  }

  /** Milliseconds until `address` may try again; 0 when it may now. */
  blockedFor(address: string): number {
    const id = `${this.options.prefix}:${address}`;
    const until = blockedAddresses.get(id);
    if (until === undefined) return 0;
    if (until > Date.now()) return until - Date.now();
    blockedAddresses.delete(id);
    return 0;
  }

  /** Counts one attempt of `address` against the bound (here, then in Redis). Never rejects. */
  async record(address: string): Promise<void> {
    const now = Date.now();
    const id = `${this.options.prefix}:${address}`;
    const window = failureWindows.get(id);
    const current = window && window.resetAt > now ? window : { count: 0, resetAt: now + this.options.windowMs };
    current.count++;
    if (current !== window) {
      if (failureWindows.size >= this.options.maxAddresses) failureWindows.delete(failureWindows.keys().next().value!);
      failureWindows.set(id, current);
    }
    if (current.count >= this.options.maxFailures) this.block(address, current.resetAt);
    if (!this.limiter) return;
    try {
      const result = await this.limiter.limit(address);
      if (result.reason !== 'timeout' && result.remaining === 0) this.block(address, result.reset);
    } catch (error) {
      log('warn', 'auth_failure_count_unavailable', { error: String(error) });
    }
  }

  private block(address: string, until: number): void {
    const id = `${this.options.prefix}:${address}`;
    if (blockedAddresses.size >= this.options.maxAddresses) blockedAddresses.clear();
    blockedAddresses.set(id, Math.max(until, blockedAddresses.get(id) ?? 0));
  }
}
