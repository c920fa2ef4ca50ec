/**
 * The global semaphore that caps concurrent tool executions (10 by default) across every isolate,
 * with a FIFO queue beyond that. `RedisSemaphore` is the deployed one (Upstash Redis over REST);
 * `MemorySemaphore` (./memory-semaphore.ts) is the in-process peer for local development.
 *
 * FIFO guarantee (RedisSemaphore): slots are granted in ticket order, a ticket being taken when a
 * call's first ACQUIRE runs in Redis (arrival at Redis; calls in one pipeline get tickets in pipeline
 * order). A waiter is granted only after every waiter with a smaller ticket has been granted or has
 * left (timed out, aborted, or reaped for missing its liveness deadline; a reaped waiter that polls
 * again queues anew, at the back). The order in which callers *learn* of their grants can differ by
 * network jitter; the order of grants cannot.
 *
 * Web APIs only: this module is bundled into Workers.
 */
import type { Redis } from '@upstash/redis';

/** Grants execution slots. */
export interface Semaphore {
  /**
   * Waits for a slot in FIFO order. Resolves with a Permit, or with a refusal when the queue timeout
   * passes, the backend fails or the signal aborts. Never throws. Reuse one `callId` per call: it
   * makes retried requests idempotent, and it must be unique among concurrent calls.
   */
  acquire(callId: string, options?: AcquireOptions): Promise<Acquired | Refused>;
}

/** Per-call options of `Semaphore.acquire`. */
export interface AcquireOptions {
  /** How long to wait in the queue; defaults to the semaphore's `queueTimeoutMs`. */
  timeoutMs?: number;
  /** Aborting it gives up the place in the queue (refused `aborted`). */
  signal?: AbortSignal;
  /** Called once when the call has to queue, with the number of waiters ahead of it. */
  onQueued?: (position: number) => void;
}

/** A granted slot. */
export type Acquired = {
  ok: true;
  permit: Permit;
  queuedMs: number;
  /** Waiters ahead of this call when it arrived (0 when a slot was free). */
  queueDepth: number;
  /** Backend requests this acquire made (0 for MemorySemaphore). */
  requests: number;
};

/** No slot: what happened, and when trying again makes sense. */
export type Refused = {
  ok: false;
  reason: 'timeout' | 'unavailable' | 'aborted';
  retryAfterMs: number;
  /** Waiters that were still ahead at the last look, when the call got as far as queueing. */
  position?: number;
  detail: string;
  requests: number;
};

/** A held slot. Release it in `finally`, even when the work failed or `lost` fired. */
export interface Permit {
  /** Aborts if the lease is lost (renewal failed): the slot may already run someone else's call. */
  lost: AbortSignal;
  /** Frees the slot for the next waiter. Idempotent; never rejects. */
  release(): Promise<void>;
}

/** Defaults of RedisSemaphore's options (MemorySemaphore shares `limit` and `queueTimeoutMs`). */
export const SEMAPHORE_DEFAULTS = {
  limit: 10,
  prefix: 'edge-tools:semaphore',
  /** A crashed holder's slot comes back after this; live holders renew at a third of it. */
  leaseMs: 15_000,
  queueTimeoutMs: 30_000,
  /** How a waiter learns its slot was handed over: a blocking pop on its own list, or polling. */
  wake: 'blpop' as 'blpop' | 'poll',
  /** Longest single BLPOP; the waiter re-polls after each (liveness, reaping, queue position). */
  blockMs: 2_000,
  /**
   * A waiter is reaped when it has not polled for its announced wait plus this; a waiter woken for a
   * handed-over slot has at least this long to claim it.
   */
  livenessGraceMs: 1_500,
  /** Poll mode: a waiter polls at half its expected time to its turn, within these bounds. */
  pollMinMs: 20,
  pollMaxMs: 1_000,
  /**
   * Cap on the Redis requests one acquire makes (first ACQUIRE, waits, polls, claim, leave), so a
   * waiting call stays far below a Worker's ~1000 subrequests; waits stretch to fit the cap.
   */
  maxRequestsPerAcquire: 50,
  /** A Redis request (other than a BLPOP's own wait) taking longer counts as a failure. */
  requestTimeoutMs: 5_000,
  /** retryAfterMs suggested when Redis fails. */
  unavailableRetryAfterMs: 1_000,
};

/**
 * Retry policy for the @upstash/redis client the semaphore uses: one retry after 50 ms instead of the
 * client's default five (~12 s), so an unreachable Redis becomes a quick `unavailable`. Retrying is
 * safe because every semaphore script is idempotent per call id.
 */
export const SEMAPHORE_REDIS_RETRY = { retries: 1, backoff: () => 50 };

/**
 * Estimates when a refused waiter may get a slot, from how fast the queue drained ahead of it
 * (`fallbackMs` when it did not move).
 */
export function estimateRetryAfterMs(firstPosition: number, lastPosition: number, waitedMs: number, fallbackMs: number): number {
  const drained = firstPosition - lastPosition;
  const estimate = drained > 0 && waitedMs > 0 ? ((lastPosition + 1) * waitedMs) / drained : fallbackMs;
  return Math.round(Math.min(Math.max(estimate, 100), 60_000));
}

/** The part of an @upstash/redis client the semaphore uses (either entry point's `Redis` fits). */
export type SemaphoreRedis = Pick<Redis, 'createScript' | 'exec'>;

/** Options of RedisSemaphore; see SEMAPHORE_DEFAULTS. */
export type RedisSemaphoreOptions = { redis: SemaphoreRedis } & Partial<typeof SEMAPHORE_DEFAULTS>;

// Lua scripts. Keys (one hash tag, so they share a cluster slot): KEYS[1] holders ZSET (id -> lease
// deadline), KEYS[2] queue ZSET (id -> ticket), KEYS[3] seen ZSET (waiter id -> liveness deadline),
// KEYS[4] seq (ticket counter), KEYS[5] the caller's wake-up list. ARGV: id, wake key prefix, limit,
// lease ms, liveness ms, claim ms. Every deadline comes from Redis TIME; clients send durations only.
// Other waiters' wake lists are derived from the prefix (undeclared keys, same hash tag).
const PRELUDE = `
local holders, queue, seen, seq, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, wakePrefix = ARGV[1], ARGV[2]
local limit, leaseMs, livenessMs, claimMs = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

-- Frees slots whose lease ran out and drops waiters that stopped polling.
local function reap()
  for _, gone in ipairs(redis.call('ZRANGEBYSCORE', holders, '-inf', now)) do
    redis.call('ZREM', holders, gone)
    redis.call('DEL', wakePrefix .. gone)
  end
  for _, gone in ipairs(redis.call('ZRANGEBYSCORE', seen, '-inf', now)) do
    redis.call('ZREM', queue, gone)
    redis.call('ZREM', seen, gone)
    redis.call('DEL', wakePrefix .. gone)
  end
end

-- Gives free slots to the smallest tickets. The caller gets a full lease; any other waiter is handed
-- its slot, woken through its list, and must claim it by its liveness deadline, or within claimMs of
-- the wake-up if that is later (a dead waiter keeps a slot idle no longer than that).
local function grant()
  local free = limit - redis.call('ZCARD', holders)
  if free <= 0 then return end
  for _, waiter in ipairs(redis.call('ZRANGE', queue, 0, free - 1)) do
    local deadline = now + leaseMs
    if waiter ~= id then
      deadline = math.max(tonumber(redis.call('ZSCORE', seen, waiter)) or now, now + claimMs)
      redis.call('RPUSH', wakePrefix .. waiter, 1)
      redis.call('PEXPIRE', wakePrefix .. waiter, deadline - now + 1000)
    end
    redis.call('ZREM', queue, waiter)
    redis.call('ZREM', seen, waiter)
    redis.call('ZADD', holders, deadline, waiter)
  end
end

-- Keys outlive their last deadline by a second, so an idle semaphore leaves nothing behind.
local function expire()
  if redis.call('ZCARD', queue) == 0 then redis.call('DEL', seq) end
  local last = now
  for _, key in ipairs({holders, seen}) do
    local top = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    if top[2] then last = math.max(last, tonumber(top[2])) end
  end
  for _, key in ipairs({holders, queue, seen, seq}) do
    redis.call('PEXPIRE', key, last - now + 1000)
  end
end
`;

/** Returns {1, waiters ahead at this call} when the caller holds a slot, else {0, waiters ahead}. */
const ACQUIRE_SCRIPT = `${PRELUDE}
reap()
if redis.call('ZSCORE', holders, id) then
  -- Already granted: a retried request, or a hand-over this poll claims.
  redis.call('ZADD', holders, now + leaseMs, id)
  redis.call('DEL', wake)
  expire()
  return {1, 0}
end
if not redis.call('ZSCORE', queue, id) then
  redis.call('ZADD', queue, redis.call('INCR', seq), id)
end
redis.call('ZADD', seen, now + livenessMs, id)
local ahead = redis.call('ZRANK', queue, id)
grant()
expire()
if redis.call('ZSCORE', holders, id) then return {1, ahead} end
return {0, redis.call('ZRANK', queue, id)}
`;

/** Leaves the semaphore (slot or queue) and hands freed slots over. 1 if it held a live lease. */
const RELEASE_SCRIPT = `${PRELUDE}
reap()
local held = redis.call('ZREM', holders, id)
redis.call('ZREM', queue, id)
redis.call('ZREM', seen, id)
redis.call('DEL', wake)
grant()
expire()
return held
`;

/**
 * Extends a lease (also claims a handed-over slot). 0 once the lease was reaped. An expired lease not
 * yet reaped is still extended: its slot cannot have gone to anyone else.
 */
const RENEW_SCRIPT = `${PRELUDE}
if not redis.call('ZSCORE', holders, id) then return 0 end
redis.call('ZADD', holders, now + leaseMs, id)
redis.call('DEL', wake)
expire()
return 1
`;

type LuaScript = { exec(keys: string[], args: string[]): Promise<unknown> };

const ABORTED = Symbol('aborted');

/** Per-call state of one acquire. */
type Attempt = {
  callId: string;
  startedAt: number;
  deadline: number;
  requests: number;
  firstPosition?: number;
  position?: number;
};

/**
 * The global FIFO semaphore on Redis (see the module comment for the exact order it guarantees).
 *
 * A release hands its slot to the next waiter inside the same script and pushes a wake-up onto that
 * waiter's list, so no grant waits for a poll. Waiters wait with BLPOP on that list (`wake: 'blpop'`,
 * re-polling every `blockMs`). Correctness never depends on BLPOP: if it fails or answers without
 * blocking (Upstash serving it over REST is unverified), the instance switches to adaptive polling,
 * which finds the slot already granted; only the wake-up latency suffers. Build the client with
 * `retry: SEMAPHORE_REDIS_RETRY` for fast failure.
 */
export class RedisSemaphore implements Semaphore {
  readonly limit: number;
  private readonly settings: typeof SEMAPHORE_DEFAULTS;
  private readonly redis: SemaphoreRedis;
  private readonly keys: string[];
  private readonly wakePrefix: string;
  private readonly acquireScript: LuaScript;
  private readonly releaseScript: LuaScript;
  private readonly renewScript: LuaScript;
  private blocking: boolean;

  constructor(options: RedisSemaphoreOptions) {
    const { redis, ...rest } = options;
    this.settings = { ...SEMAPHORE_DEFAULTS, ...rest };
    this.limit = this.settings.limit;
    this.redis = redis;
    const tag = `{${this.settings.prefix}}`;
    this.keys = [`${tag}:holders`, `${tag}:queue`, `${tag}:seen`, `${tag}:seq`];
    this.wakePrefix = `${tag}:wake:`;
    this.acquireScript = redis.createScript(ACQUIRE_SCRIPT);
    this.releaseScript = redis.createScript(RELEASE_SCRIPT);
    this.renewScript = redis.createScript(RENEW_SCRIPT);
    this.blocking = this.settings.wake === 'blpop';
  }

  async acquire(callId: string, options: AcquireOptions = {}): Promise<Acquired | Refused> {
    const { timeoutMs = this.settings.queueTimeoutMs, signal, onQueued } = options;
    const startedAt = performance.now();
    const attempt: Attempt = { callId, startedAt, deadline: startedAt + timeoutMs, requests: 0 };
    if (signal?.aborted) return this.refuse(attempt, 'aborted', 'aborted before queueing');
    for (;;) {
      // Poll: takes a ticket the first time, refreshes liveness, and grants when it is our turn.
      const cycleMs = this.cycleMs(attempt);
      const sentAt = performance.now();
      let reply: [number, number];
      try {
        reply = parseAcquireReply(await this.run(attempt, this.acquireScript, callId, cycleMs + this.settings.livenessGraceMs));
      } catch (error) {
        return this.refuse(attempt, 'unavailable', `semaphore backend failed: ${errorText(error)}`);
      }
      const [granted, ahead] = reply;
      attempt.firstPosition ??= ahead;
      if (granted) return this.grant(attempt, signal, sentAt + this.settings.leaseMs, false);
      if (attempt.position === undefined) onQueued?.(ahead);
      attempt.position = ahead;

      const remaining = attempt.deadline - performance.now();
      if (remaining <= 0) return this.refuse(attempt, 'timeout', `no slot within ${timeoutMs} ms`);
      if (this.requestsLeft(attempt) < this.cycleCost()) {
        return this.refuse(attempt, 'timeout', `gave up after ${attempt.requests} Redis requests`);
      }
      if (signal?.aborted) return this.refuse(attempt, 'aborted', 'aborted while queued');
      if (this.blocking && remaining >= 10) {
        const woken = await this.waitForWake(attempt, Math.min(cycleMs, remaining), signal);
        if (woken === ABORTED) return this.refuse(attempt, 'aborted', 'aborted while queued');
        if (woken) return this.grant(attempt, signal, performance.now() + this.settings.livenessGraceMs, true);
      } else {
        const delay = Math.min(Math.max(this.pollDelay(attempt), this.spacing(attempt)), remaining);
        if ((await abortable(sleep(delay), signal)) === ABORTED) {
          return this.refuse(attempt, 'aborted', 'aborted while queued');
        }
      }
    }
  }

  /** RENEW: true while the lease is live (also claims a handed-over slot). */
  private async renew(callId: string): Promise<boolean> {
    return Number(await this.run(null, this.renewScript, callId, 0)) === 1;
  }

  /** RELEASE: leaves slot or queue and hands the slot over. Never rejects. */
  private async leave(callId: string, attempt: Attempt | null): Promise<void> {
    try {
      await this.run(attempt, this.releaseScript, callId, 0);
    } catch {
      // Redis unreachable: the lease or liveness deadline frees the slot.
    }
  }

  private run(attempt: Attempt | null, script: LuaScript, callId: string, livenessMs: number): Promise<unknown> {
    if (attempt) attempt.requests++;
    const { limit, leaseMs, livenessGraceMs, requestTimeoutMs } = this.settings;
    const args = [callId, this.wakePrefix, String(limit), ...[leaseMs, livenessMs, livenessGraceMs].map((ms) => String(Math.ceil(ms)))];
    return withTimeout(script.exec([...this.keys, this.wakePrefix + callId], args), requestTimeoutMs);
  }

  /** Waits on the caller's wake-up list: true when woken (its slot was handed over). */
  private async waitForWake(attempt: Attempt, waitMs: number, signal?: AbortSignal): Promise<boolean | typeof ABORTED> {
    attempt.requests++;
    const startedAt = performance.now();
    const pop = withTimeout(
      this.redis.exec<unknown>(['blpop', this.wakePrefix + attempt.callId, (waitMs / 1000).toFixed(3)]),
      waitMs + this.settings.requestTimeoutMs,
    );
    try {
      const popped = await abortable(pop, signal);
      if (popped === ABORTED || popped !== null) return popped === ABORTED ? ABORTED : true;
      // An empty answer well before the timeout means the endpoint does not block.
      if (waitMs >= 200 && performance.now() - startedAt < waitMs / 2) this.blocking = false;
      return false;
    } catch {
      // BLPOP refused or failed: poll from now on. The next poll tells whether Redis itself is down.
      this.blocking = false;
      return false;
    }
  }

  private async grant(attempt: Attempt, signal: AbortSignal | undefined, leaseEndsAt: number, woken: boolean): Promise<Acquired | Refused> {
    if (signal?.aborted) return this.refuse(attempt, 'aborted', 'aborted while being granted');
    // A handed-over slot is claimed right away (off the critical path) to turn it into a full lease.
    if (woken) attempt.requests++;
    return {
      ok: true,
      permit: new RedisPermit({
        renew: () => this.renew(attempt.callId),
        release: () => this.leave(attempt.callId, null),
        leaseMs: this.settings.leaseMs,
        leaseEndsAt,
        claimNow: woken,
      }),
      queuedMs: performance.now() - attempt.startedAt,
      queueDepth: attempt.firstPosition ?? 0,
      requests: attempt.requests,
    };
  }

  /**
   * A refusal leaves the queue first (a refused call holds no ticket), except when Redis is failing:
   * then the leave is only attempted in the background and the liveness deadline does the rest.
   */
  private async refuse(attempt: Attempt, reason: Refused['reason'], detail: string): Promise<Refused> {
    const { position, firstPosition } = attempt;
    const retryAfterMs =
      reason === 'unavailable'
        ? this.settings.unavailableRetryAfterMs
        : reason === 'aborted'
          ? 0
          : estimateRetryAfterMs(firstPosition ?? 0, position ?? 0, performance.now() - attempt.startedAt, this.settings.queueTimeoutMs);
    // The call may hold a ticket, or even a slot granted by a request that landed after all.
    if (attempt.requests > 0) {
      const leaving = this.leave(attempt.callId, attempt);
      if (reason !== 'unavailable') await leaving;
    }
    const where = position === undefined ? '' : `; ${position} waiting ahead`;
    return { ok: false, reason, retryAfterMs, position, detail: detail + where, requests: attempt.requests };
  }

  /** Requests one wait cycle costs: a BLPOP and the poll after it, or a poll. */
  private cycleCost(): number {
    return this.blocking ? 2 : 1;
  }

  /** Requests left for waiting, keeping one for the final claim or leave. */
  private requestsLeft(attempt: Attempt): number {
    return this.settings.maxRequestsPerAcquire - attempt.requests - 1;
  }

  /**
   * Once half the request cap is spent, stretches waits so the rest lasts until the deadline (most
   * waits end long before it, so the first half goes on prompt polls).
   */
  private spacing(attempt: Attempt): number {
    const left = this.requestsLeft(attempt);
    if (left > this.settings.maxRequestsPerAcquire / 2) return 0;
    const cycles = Math.floor(left / this.cycleCost());
    const remaining = attempt.deadline - performance.now();
    return cycles > 0 ? remaining / cycles : remaining;
  }

  /** The longest wait before this call's next poll; the liveness deadline it announces covers it. */
  private cycleMs(attempt: Attempt): number {
    return Math.max(this.blocking ? this.settings.blockMs : this.settings.pollMaxMs, this.spacing(attempt));
  }

  /**
   * Poll mode: half the expected time to this call's turn, from how fast the queue drained so far
   * (before anything drained, (position + 1) × pollMinMs), kept within [pollMinMs, pollMaxMs].
   */
  private pollDelay(attempt: Attempt): number {
    const { pollMinMs, pollMaxMs } = this.settings;
    const position = attempt.position ?? 0;
    const drained = (attempt.firstPosition ?? 0) - position;
    const waitedMs = performance.now() - attempt.startedAt;
    const expectedMs = drained > 0 ? ((position + 1) * waitedMs) / drained : (position + 1) * pollMinMs;
    return Math.min(Math.max(expectedMs / 2, pollMinMs), pollMaxMs);
  }
}

/** What a permit needs to keep its lease. */
type Lease = {
  renew(): Promise<boolean>;
  release(): Promise<void>;
  leaseMs: number;
  /** Local estimate of when the lease runs out (durations only: isolates' clocks disagree). */
  leaseEndsAt: number;
  /** Renew at once: a handed-over slot must be claimed before the waiter's liveness deadline. */
  claimNow: boolean;
};

/** A lease renewed in the background at a third of its length; `lost` aborts when that fails. */
class RedisPermit implements Permit {
  readonly lost: AbortSignal;
  private readonly lease: Lease;
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private released = false;

  constructor(lease: Lease) {
    this.lease = lease;
    this.lost = this.controller.signal;
    if (lease.claimNow) void this.renew();
    else this.schedule(lease.leaseMs / 3);
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.lease.release();
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => void this.renew(), delayMs);
  }

  private async renew(): Promise<void> {
    const sentAt = performance.now();
    let live: boolean;
    try {
      live = await this.lease.renew();
    } catch {
      if (this.released) return;
      // Retry while the lease surely lasts; past that, another call may already have the slot.
      const left = this.lease.leaseEndsAt - performance.now();
      if (left < 100) this.lose('the lease could not be renewed (semaphore backend failing)');
      else this.schedule(Math.min(this.lease.leaseMs / 3, left / 2));
      return;
    }
    if (this.released) return;
    if (!live) return this.lose('the lease expired and the slot was taken back');
    this.lease.leaseEndsAt = sentAt + this.lease.leaseMs;
    this.schedule(this.lease.leaseMs / 3);
  }

  private lose(why: string): void {
    this.controller.abort(new Error(`semaphore slot lost: ${why}`));
  }
}

function parseAcquireReply(reply: unknown): [number, number] {
  if (Array.isArray(reply)) {
    const [granted, ahead] = reply as unknown[];
    if (typeof granted === 'number' && typeof ahead === 'number') return [granted, ahead];
  }
  throw new Error(`unexpected ACQUIRE reply ${JSON.stringify(reply)}`);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Settles with ABORTED as soon as the signal aborts (the promise itself runs on). */
function abortable<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T | typeof ABORTED> {
  if (!signal) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.resolve(ABORTED);
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Rejects when the promise takes longer than `ms` (the request itself cannot be cancelled). */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer!: ReturnType<typeof setTimeout>;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
  });
  promise.catch(() => undefined);
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
