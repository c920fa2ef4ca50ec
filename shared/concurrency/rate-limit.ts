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
import { log } from '../observability/log.ts';

export const RATE_LIMIT_DEFAULTS = {
  /** Calls per minute per API key when the project sets no limit of its own. Generous by design. */
  perMinute: 600,
  /** After this, the check gives up and lets the call pass (fail-open). */
  timeoutMs: 1_000,
  prefix: 'edge-tools:ratelimit',
};

// Identifiers that exhausted their window, kept per isolate so a flood is refused without Redis.
// Plain data, no I/O: safe at module scope.
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
  return fail('RATE_LIMITED', `This API key made more than ${perMinute} calls in the last minute. Wait ${Math.ceil(retryAfterMs / 1000)} s before calling again.`, {
    hint: 'Space calls out, or batch work into fewer calls.',
    details: { retry_after_ms: retryAfterMs, limit_per_minute: perMinute },
  });
}
