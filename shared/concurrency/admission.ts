/**
 * Admission: the pipeline's steps 4 and 5. A validated call passes the per-key rate limit and then
 * holds one slot of the global semaphore while it executes (retries included).
 *
 * Both checks are started in the same tick, so @upstash/redis's auto-pipelining sends them to Redis
 * as one request: an uncontended call costs one Redis round trip on its critical path. A call
 * refused by the rate limit gives its slot (or its place in the queue) back at once.
 */
// The Workers entry of @upstash/redis: the package's root entry is the one for Node.
import { Redis } from '@upstash/redis/cloudflare';
import { fail, type Failure } from '../core/contract.ts';
import { log } from '../core/log.ts';
import { MemorySemaphore } from './memory-semaphore.ts';
import { checkRateLimit, RATE_LIMIT_DEFAULTS } from './rate-limit.ts';
import { RedisSemaphore, SEMAPHORE_DEFAULTS, SEMAPHORE_REDIS_RETRY, type Permit, type Refused, type Semaphore } from './semaphore.ts';

/** The worker variables admission reads (all optional; strings, as Workers vars arrive). */
export interface AdmissionEnv {
  UPSTASH_REDIS_REST_URL?: string;
  UPSTASH_REDIS_REST_TOKEN?: string;
  /** Concurrent executions across every isolate (default 10). */
  CONCURRENCY_LIMIT?: string;
  /** How long a call may wait for a slot before BUSY (default 30000). */
  QUEUE_TIMEOUT_MS?: string;
  /** Default calls per minute per API key (default 600); a project may set its own. */
  RATE_LIMIT_PER_MINUTE?: string;
  /**
   * Prefix of every Redis key, so deployments sharing one Redis keep separate semaphores (default
   * 'edge-tools'). Workers sharing a namespace must share CONCURRENCY_LIMIT too.
   */
  CONCURRENCY_NAMESPACE?: string;
  /**
   * 'true' lets a deployed worker without Redis run with the in-process semaphore, which caps each
   * isolate only. Without it such a worker refuses every call (CONFIG_ERROR); a local one (wrangler
   * dev, tests) needs no opt-out.
   */
  ALLOW_IN_PROCESS_SEMAPHORE?: string;
}

export interface Admission {
  /** 'redis' is global; 'memory' caps one isolate only (local development without Redis). */
  backend: 'redis' | 'memory';
  admit(call: AdmitCall): Promise<Admitted | Failure>;
  /** Whether the backend answers now, and how fast (readiness); never throws. */
  probe(timeoutMs: number): Promise<Probe>;
}

/** The outcome of one readiness check. */
export type Probe = { ok: boolean; latencyMs: number };

export interface AdmitCall {
  callId: string;
  keyId: string;
  /** The project's own limit, or null for the deployment default. */
  rateLimitPerMinute: number | null;
  signal: AbortSignal;
  /** Called when the call has to wait, with the number of calls ahead of it. */
  onQueued(queueDepth: number): void;
  /** Keeps a refused call's leave running after the answer (Workers: `ctx.waitUntil`). */
  waitUntil(work: Promise<unknown>): void;
  /**
   * Whether the call holds a slot of the global semaphore while it runs (default true). Code mode's
   * execution passes the rate limit only: the tool calls it makes take slots as they run.
   */
  slot?: boolean;
}

export interface Admitted {
  ok: true;
  permit: Permit;
  queuedMs: number;
}

/** The permit of a call admitted without a slot: nothing to keep, nothing to give back. */
const NO_SLOT: Permit = { lapse: () => undefined, release: async () => {} };

// The in-process fallback must be shared by every request of the isolate to cap anything at all.
// It holds plain state, no I/O, so it may live at module scope: one per CONCURRENCY_LIMIT and
// QUEUE_TIMEOUT_MS pair, and a worker's variables give it one.
const memorySemaphores = new Map<string, MemorySemaphore>();
let announcedMemoryBackend = false;

/** Options of {@link admissionFromEnv}. */
export interface AdmissionOptions {
  /** The worker runs on a developer's machine, where no Redis is needed. */
  local: boolean;
  /** The request's Redis client ({@link redisFromEnv}), shared with the rest of the request; undefined without Redis. */
  redis: Redis | undefined;
}

/** Builds admission for one request from the worker's variables, or CONFIG_ERROR naming a bad or missing one. */
export function admissionFromEnv(env: AdmissionEnv, { local, redis }: AdmissionOptions): Admission | Failure {
  const limit = positiveInt(env, 'CONCURRENCY_LIMIT', SEMAPHORE_DEFAULTS.limit);
  const queueTimeoutMs = positiveInt(env, 'QUEUE_TIMEOUT_MS', SEMAPHORE_DEFAULTS.queueTimeoutMs);
  const perMinute = positiveInt(env, 'RATE_LIMIT_PER_MINUTE', RATE_LIMIT_DEFAULTS.perMinute);
  if (typeof limit !== 'number') return limit;
  if (typeof queueTimeoutMs !== 'number') return queueTimeoutMs;
  if (typeof perMinute !== 'number') return perMinute;
  const namespace = namespaceOf(env);
  const settings: Settings = { limit, queueTimeoutMs, perMinute, namespace, rateLimitPrefix: `${namespace}:ratelimit` };

  if (!redis) {
    if (!local && env.ALLOW_IN_PROCESS_SEMAPHORE !== 'true') return redisMissing(env);
    if (!announcedMemoryBackend) {
      announcedMemoryBackend = true;
      log('warn', 'semaphore_in_process', {
        message: `No Redis configured (UPSTASH_REDIS_REST_URL/TOKEN): concurrency is capped at ${settings.limit} per isolate only, and no rate limit applies. Use this for local development only.`,
      });
    }
    const key = `${settings.limit}:${settings.queueTimeoutMs}`;
    let semaphore = memorySemaphores.get(key);
    if (!semaphore) memorySemaphores.set(key, (semaphore = new MemorySemaphore(settings)));
    return {
      backend: 'memory',
      admit: (call) => admitThrough(semaphore, undefined, settings, call),
      probe: async () => ({ ok: true, latencyMs: 0 }),
    };
  }

  const semaphore = new RedisSemaphore({
    redis,
    limit: settings.limit,
    queueTimeoutMs: settings.queueTimeoutMs,
    prefix: `${namespace}:semaphore`,
  });
  return {
    backend: 'redis',
    admit: (call) => admitThrough(semaphore, redis, settings, call),
    probe: (timeoutMs) => pingRedis(redis, timeoutMs),
  };
}

/** The Redis client for one request (semaphore, rate limits), or undefined when none is configured. */
export function redisFromEnv(env: AdmissionEnv): Redis | undefined {
  if (!env.UPSTASH_REDIS_REST_URL || !env.UPSTASH_REDIS_REST_TOKEN) return undefined;
  return new Redis({
    url: env.UPSTASH_REDIS_REST_URL,
    token: env.UPSTASH_REDIS_REST_TOKEN,
    retry: SEMAPHORE_REDIS_RETRY,
    enableTelemetry: false,
  });
}

/** The prefix of every Redis key of this deployment. */
export function namespaceOf(env: AdmissionEnv): string {
  return env.CONCURRENCY_NAMESPACE || 'edge-tools';
}

type Settings = { limit: number; queueTimeoutMs: number; perMinute: number; namespace: string; rateLimitPrefix: string };

/** CONFIG_ERROR naming the Redis variables a deployed worker lacks. */
function redisMissing(env: AdmissionEnv): Failure {
  const missing = (['UPSTASH_REDIS_REST_URL', 'UPSTASH_REDIS_REST_TOKEN'] as const).filter((name) => !env[name]);
  return fail(
    'CONFIG_ERROR',
    `The deployment has no Redis configured (${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} missing), so the global limit on concurrent executions cannot be enforced and no tool runs.`,
    {
      hint: `Set ${missing.join(' and ')} (wrangler secret put ${missing[0]}), or, to cap each isolate only, set ALLOW_IN_PROCESS_SEMAPHORE = "true".`,
      details: { reason: 'redis_not_configured', missing_variables: missing },
    },
  );
}

/** One PING, timed; false when Redis fails or takes longer than `timeoutMs`. */
async function pingRedis(redis: Redis, timeoutMs: number): Promise<Probe> {
  const startedAt = performance.now();
  let timer!: ReturnType<typeof setTimeout>;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  const answer = await Promise.race([redis.ping().catch(() => 'failed'), timeout]);
  clearTimeout(timer);
  return { ok: answer === 'PONG', latencyMs: performance.now() - startedAt };
}

async function admitThrough(
  semaphore: Semaphore,
  redis: Redis | undefined,
  settings: Settings,
  call: AdmitCall,
): Promise<Admitted | Failure> {
  const leave = new AbortController();
  const signal = AbortSignal.any([call.signal, leave.signal]);
  // Started together: one Redis round trip when auto-pipelining batches them.
  const acquiring =
    call.slot === false
      ? Promise.resolve({ ok: true as const, permit: NO_SLOT, queuedMs: 0 })
      : semaphore.acquire(call.callId, { signal, onQueued: call.onQueued, waitUntil: call.waitUntil });
  const limited = redis
    ? await checkRateLimit({
        redis,
        identifier: call.keyId,
        perMinute: call.rateLimitPerMinute ?? settings.perMinute,
        prefix: settings.rateLimitPrefix,
      })
    : undefined;
  if (limited) leave.abort();
  const acquired = await acquiring;
  if (limited) {
    if (acquired.ok) call.waitUntil(acquired.permit.release());
    return limited;
  }
  if (!acquired.ok) return refusal(acquired, settings);
  return { ok: true, permit: acquired.permit, queuedMs: acquired.queuedMs };
}

/** CONFIG_ERROR: the namespace's semaphore is in use with another limit. */
function limitMismatch(refused: Refused, settings: Settings): Failure {
  return fail(
    'CONFIG_ERROR',
    `This worker's CONCURRENCY_LIMIT is ${settings.limit}, but the workers already using the concurrency namespace '${settings.namespace}' enforce ${refused.limitInUse}; workers sharing a namespace must share one limit, so the call did not run.`,
    {
      hint: 'Give every worker of the namespace the same CONCURRENCY_LIMIT, or give this one its own CONCURRENCY_NAMESPACE. A new limit takes over once the namespace has no execution running or waiting.',
      details: {
        reason: 'concurrency_limit_mismatch',
        configured_limit: settings.limit,
        limit_in_use: refused.limitInUse,
        namespace: settings.namespace,
      },
    },
  );
}

/**
 * BUSY with what happened, when to retry, and the caller's place in the queue; or CONFIG_ERROR when
 * the namespace is in use with another limit.
 */
function refusal(refused: Refused, settings: Settings): Failure {
  const { limit } = settings;
  const details = {
    reason: refused.reason,
    retry_after_ms: refused.retryAfterMs,
    queue_position: refused.position ?? null,
    detail: refused.detail,
  };
  const retry = `Retry after ${Math.ceil(refused.retryAfterMs / 1000)} s.`;
  switch (refused.reason) {
    case 'timeout':
      return fail(
        'BUSY',
        `All ${limit} execution slots stayed busy until the queue timeout; the call did not run${refused.position === undefined ? '' : ` (${refused.position} calls were still ahead of it)`}. ${retry}`,
        {
          retryable: true,
          details,
        },
      );
    case 'unavailable':
      return fail(
        'BUSY',
        `The concurrency service is unavailable, so the call did not run (the limit of ${limit} concurrent executions is never exceeded to stay available). ${retry}`,
        {
          retryable: true,
          details,
        },
      );
    case 'aborted':
      return fail('BUSY', 'The call was abandoned while it waited for an execution slot; it did not run.', { retryable: true, details });
    case 'misconfigured':
      return limitMismatch(refused, settings);
  }
}

function positiveInt(env: AdmissionEnv, name: keyof AdmissionEnv, fallback: number): number | Failure {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (Number.isInteger(value) && value > 0) return value;
  return fail('CONFIG_ERROR', `The deployment variable ${name} must be a positive integer, but it is '${raw}'.`, {
    hint: `Fix ${name} in wrangler.toml or the dashboard (default ${fallback}).`,
    details: { reason: 'invalid_variable', variable: name },
  });
}
