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
 * A call that was answered (refused, abandoned, timed out) holds no slot afterwards, whatever order
 * its requests reach Redis in: its leave waits in the background (`waitUntil`) for Redis to answer,
 * so a stalled Redis runs it right after the call's late ACQUIRE; a leave that arrives first leaves
 * a tombstone that makes the late ACQUIRE take nothing; and a fresh grant's first lease is short
 * (`firstLeaseMs`), so a grant nobody takes up (its isolate gone) holds its slot only that long.
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
  /**
   * Keeps work that outlives the answer running: a refused call's leave, retried until Redis
   * answers it. On Workers pass `ctx.waitUntil`, or the runtime may cancel it with the request.
   */
  waitUntil?: (work: Promise<unknown>) => void;
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
  /** `misconfigured`: the namespace is in use with another limit (see `limitInUse`). */
  reason: 'timeout' | 'unavailable' | 'aborted' | 'misconfigured';
  retryAfterMs: number;
  /** With `misconfigured`: the limit the callers already in the namespace enforce. */
  limitInUse?: number;
  /** Waiters that were still ahead at the last look, when the call got as far as queueing. */
  position?: number;
  detail: string;
  requests: number;
};

/** A held slot. Release it in `finally`, even when the work failed or `lost` fired. */
export interface Permit {
  /**
   * Aborts when the lease can no longer be vouched for (a renewal was refused, or none succeeded
   * before the lease ran out): the slot may already run someone else's call.
   */
  lost: AbortSignal;
  /**
   * Frees the slot for the next waiter, retrying until the backend answers (for a while): hand the
   * promise to `waitUntil` on Workers. Idempotent; never rejects.
   */
  release(): Promise<void>;
}

/** Defaults of RedisSemaphore's options (MemorySemaphore shares `limit` and `queueTimeoutMs`). */
export const SEMAPHORE_DEFAULTS = {
  limit: 10,
  prefix: 'edge-tools:semaphore',
  /** A crashed holder's slot comes back after this; live holders renew at a third of it. */
  leaseMs: 15_000,
  /**
   * The lease of a fresh grant, until its first renewal (at a third of it) extends it to `leaseMs`.
   * Short, so that a grant nobody takes up (an ACQUIRE that reached Redis after its caller had
   * gone, its leave lost with the isolate) holds a slot only this long.
   */
  firstLeaseMs: 3_000,
  /**
   * How long Redis remembers a call that left before its ACQUIRE ran (held no slot, had no ticket):
   * that ACQUIRE, arriving late, then takes nothing.
   */
  tombstoneMs: 60_000,
  /**
   * How long a leave (RELEASE) may wait for Redis to answer, in the background: a stalled Redis runs
   * it, in order, after the call's own ACQUIRE when it resumes. Within Workers' 30 s of `waitUntil`.
   */
  leaveWaitMs: 25_000,
  /** RELEASE requests a leave sends at most, when they fail (Redis unreachable), 250 ms, 500 ms, … apart. */
  leaveAttempts: 3,
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
// KEYS[4] seq (ticket counter), KEYS[5] gone ZSET (tombstones: id -> forget-by), KEYS[6] the limit
// the namespace is used with, KEYS[7] the caller's wake-up list. ARGV: id, wake key prefix, limit,
// lease ms, liveness ms, claim ms, first lease ms, tombstone ms. Every deadline comes from Redis
// TIME; clients send durations only. Other waiters' wake lists are derived from the prefix
// (undeclared keys, same hash tag).
const PRELUDE = `
local holders, queue, seen, seq, gone, limitKey, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local id, wakePrefix = ARGV[1], ARGV[2]
local limit, leaseMs, livenessMs, claimMs = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local firstLeaseMs, tombstoneMs = tonumber(ARGV[7]), tonumber(ARGV[8])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

-- Frees slots whose lease ran out, drops waiters that stopped polling and forgets old tombstones.
local function reap()
  for _, expired in ipairs(redis.call('ZRANGEBYSCORE', holders, '-inf', now)) do
    redis.call('ZREM', holders, expired)
    redis.call('DEL', wakePrefix .. expired)
  end
  for _, silent in ipairs(redis.call('ZRANGEBYSCORE', seen, '-inf', now)) do
    redis.call('ZREM', queue, silent)
    redis.call('ZREM', seen, silent)
    redis.call('DEL', wakePrefix .. silent)
  end
  redis.call('ZREMRANGEBYSCORE', gone, '-inf', now)
end

-- Gives free slots to the smallest tickets. The caller gets a first lease; any other waiter is
-- handed its slot, woken through its list, and must claim it by its liveness deadline, or within
-- claimMs of the wake-up if that is later (a dead waiter keeps a slot idle no longer than that).
local function grant()
  local free = limit - redis.call('ZCARD', holders)
  if free <= 0 then return end
  for _, waiter in ipairs(redis.call('ZRANGE', queue, 0, free - 1)) do
    local deadline = now + firstLeaseMs
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

-- Keys outlive their last deadline by a second, so an idle semaphore leaves nothing behind (the
-- limit is kept only while someone holds or waits: then any limit may take over).
local function expire()
  if redis.call('ZCARD', queue) == 0 then
    redis.call('DEL', seq)
    if redis.call('ZCARD', holders) == 0 then redis.call('DEL', limitKey) end
  end
  local last = now
  for _, key in ipairs({holders, seen, gone}) do
    local top = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    if top[2] then last = math.max(last, tonumber(top[2])) end
  end
  for _, key in ipairs({holders, queue, seen, seq, gone, limitKey}) do
    redis.call('PEXPIRE', key, last - now + 1000)
  end
end
`;

/**
 * Returns {1, waiters ahead at this call} when the caller holds a slot, {0, waiters ahead} when it
 * waits, {-1, limit in use} when the namespace is in use with another limit, {-2, 0} when the call
 * has already left (this request arrived after its RELEASE).
 */
const ACQUIRE_SCRIPT = `${PRELUDE}
reap()
if redis.call('ZSCORE', gone, id) then return {-2, 0} end
local inUse = tonumber(redis.call('GET', limitKey))
if inUse and inUse ~= limit and redis.call('ZCARD', holders) + redis.call('ZCARD', queue) > 0 then
  return {-1, inUse}
end
redis.call('SET', limitKey, limit)
local lease = tonumber(redis.call('ZSCORE', holders, id))
if lease then
  -- Already granted: a retried request, or a hand-over this poll claims.
  redis.call('ZADD', holders, math.max(lease, now + firstLeaseMs), id)
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

/**
 * Leaves the semaphore (slot or queue) and hands freed slots over. 1 if it held a live lease. A call
 * that held nothing and had no ticket leaves a tombstone, so its own ACQUIRE, still on its way (sent
 * before the caller gave up), takes nothing when it arrives.
 */
const RELEASE_SCRIPT = `${PRELUDE}
reap()
local held = redis.call('ZREM', holders, id)
local queued = redis.call('ZREM', queue, id)
redis.call('ZREM', seen, id)
redis.call('DEL', wake)
if held == 0 and queued == 0 then redis.call('ZADD', gone, now + tombstoneMs, id) end
grant()
expire()
return held
`;

/**
 * Extends a lease to the full lease (also claims a handed-over slot). 0 once the lease was reaped.
 * An expired lease not yet reaped is still extended: its slot cannot have gone to anyone else.
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

/** ACQUIRE's first reply value when the namespace is used with another limit. */
const MISCONFIGURED = -1;
/** ACQUIRE's first reply value when the call's RELEASE got there first. */
const ALREADY_LEFT = -2;

/** Per-call state of one acquire. */
type Attempt = {
  callId: string;
  startedAt: number;
  deadline: number;
  requests: number;
  waitUntil: AcquireOptions['waitUntil'];
  firstPosition?: number;
  position?: number;
  /**
   * Local time by which Redis surely still counts this waiter as live: the last poll's send time
   * plus the liveness it announced (Redis started counting later). A slot handed over to the waiter
   * is kept for it at least that long.
   */
  liveUntil?: number;
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
    this.keys = [`${tag}:holders`, `${tag}:queue`, `${tag}:seen`, `${tag}:seq`, `${tag}:gone`, `${tag}:limit`];
    this.wakePrefix = `${tag}:wake:`;
    this.acquireScript = redis.createScript(ACQUIRE_SCRIPT);
    this.releaseScript = redis.createScript(RELEASE_SCRIPT);
    this.renewScript = redis.createScript(RENEW_SCRIPT);
    this.blocking = this.settings.wake === 'blpop';
  }

  async acquire(callId: string, options: AcquireOptions = {}): Promise<Acquired | Refused> {
    const { timeoutMs = this.settings.queueTimeoutMs, signal, onQueued, waitUntil } = options;
    const startedAt = performance.now();
    const attempt: Attempt = { callId, startedAt, deadline: startedAt + timeoutMs, requests: 0, waitUntil };
    if (signal?.aborted) return this.refuse(attempt, 'aborted', 'aborted before queueing');
    for (;;) {
      // Poll: takes a ticket the first time, refreshes liveness, and grants when it is our turn.
      const cycleMs = this.cycleMs(attempt);
      const livenessMs = cycleMs + this.settings.livenessGraceMs;
      const sentAt = performance.now();
      let reply: [number, number];
      try {
        reply = parseAcquireReply(await this.run(attempt, this.acquireScript, callId, livenessMs));
      } catch (error) {
        return this.refuse(attempt, 'unavailable', `semaphore backend failed: ${errorText(error)}`);
      }
      const [granted, ahead] = reply;
      if (granted === MISCONFIGURED) {
        return { ok: false, reason: 'misconfigured', retryAfterMs: 0, limitInUse: ahead, detail: `the namespace is in use with a limit of ${ahead}, not ${this.limit}`, requests: attempt.requests };
      }
      if (granted === ALREADY_LEFT) return this.refuse(attempt, 'aborted', 'the call had already left the semaphore');
      attempt.firstPosition ??= ahead;
      if (granted) return this.grant(attempt, signal, sentAt + this.settings.firstLeaseMs, false);
      if (attempt.position === undefined) onQueued?.(ahead);
      attempt.position = ahead;
      attempt.liveUntil = sentAt + livenessMs;

      const remaining = attempt.deadline - performance.now();
      if (remaining <= 0) return this.refuse(attempt, 'timeout', `no slot within ${timeoutMs} ms`);
      if (this.requestsLeft(attempt) < this.cycleCost()) {
        return this.refuse(attempt, 'timeout', `gave up after ${attempt.requests} Redis requests`);
      }
      if (signal?.aborted) return this.refuse(attempt, 'aborted', 'aborted while queued');
      if (this.blocking && remaining >= 10) {
        const woken = await this.waitForWake(attempt, Math.min(cycleMs, remaining), signal);
        if (woken === ABORTED) return this.refuse(attempt, 'aborted', 'aborted while queued');
        // Redis keeps a handed-over slot until the waiter's liveness deadline, or claimMs after the
        // hand-over if that is later: the claim must be confirmed before the later of the two.
        if (woken) return this.grant(attempt, signal, Math.max(performance.now() + this.settings.livenessGraceMs, attempt.liveUntil ?? 0), true);
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

  /**
   * RELEASE: leaves slot or queue and hands the slot over. A request that hangs is waited for, up to
   * `leaveWaitMs` (a frozen Redis runs it, in order, after the call's ACQUIRE when it thaws); one
   * that fails is sent again, up to `leaveAttempts` in all. Past that, the first lease, the liveness
   * deadline or the tombstone does the rest. Never rejects.
   */
  private async leave(callId: string, attempt: Attempt | null): Promise<void> {
    const giveUpAt = performance.now() + this.settings.leaveWaitMs;
    for (let sent = 1, pauseMs = 250; ; sent++, pauseMs *= 2) {
      try {
        await this.run(attempt, this.releaseScript, callId, 0, giveUpAt - performance.now());
        return;
      } catch {
        if (sent >= this.settings.leaveAttempts || performance.now() + pauseMs >= giveUpAt) return;
        await sleep(pauseMs);
      }
    }
  }

  private run(attempt: Attempt | null, script: LuaScript, callId: string, livenessMs: number, timeoutMs = this.settings.requestTimeoutMs): Promise<unknown> {
    if (attempt) attempt.requests++;
    const { limit, leaseMs, livenessGraceMs, firstLeaseMs, tombstoneMs } = this.settings;
    const ms = (value: number) => String(Math.ceil(value));
    const args = [callId, this.wakePrefix, String(limit), ms(leaseMs), ms(livenessMs), ms(livenessGraceMs), ms(Math.min(firstLeaseMs, leaseMs)), ms(tombstoneMs)];
    return withTimeout(script.exec([...this.keys, this.wakePrefix + callId], args), timeoutMs);
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
        firstRenewalMs: Math.min(this.settings.firstLeaseMs, this.settings.leaseMs) / 3,
        claimNow: woken,
      }),
      queuedMs: performance.now() - attempt.startedAt,
      queueDepth: attempt.firstPosition ?? 0,
      requests: attempt.requests,
    };
  }

  /**
   * A refusal leaves the queue first (a refused call holds no ticket), except when Redis is failing:
   * then the leave goes on in the background (`waitUntil`) until Redis answers it.
   */
  private async refuse(attempt: Attempt, reason: Exclude<Refused['reason'], 'misconfigured'>, detail: string): Promise<Refused> {
    const { position, firstPosition } = attempt;
    const retryAfterMs =
      reason === 'unavailable'
        ? this.settings.unavailableRetryAfterMs
        : reason === 'aborted'
          ? 0
          : estimateRetryAfterMs(firstPosition ?? 0, position ?? 0, performance.now() - attempt.startedAt, this.settings.queueTimeoutMs);
    // The call may hold a ticket, or even a slot granted by a request that landed after all (or that
    // will land: a request that timed out may still be on its way, or waiting in a stalled Redis).
    if (attempt.requests > 0) {
      const leaving = this.leave(attempt.callId, attempt);
      attempt.waitUntil?.(leaving);
      if (reason !== 'unavailable') await within(leaving, this.settings.requestTimeoutMs);
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
  /**
   * Local estimate of when the lease runs out: when the granting or renewing request was sent, plus
   * its length. Never later than Redis's own deadline, which starts when the request arrives.
   */
  leaseEndsAt: number;
  /** When to renew a fresh grant's first lease. */
  firstRenewalMs: number;
  /** Renew at once: a handed-over slot must be claimed before the waiter's liveness deadline. */
  claimNow: boolean;
};

/**
 * A lease renewed in the background at a third of its length. `lost` aborts when a renewal is
 * refused, or when the lease runs out before any renewal was confirmed (Redis stalled or down).
 */
class RedisPermit implements Permit {
  readonly lost: AbortSignal;
  private readonly lease: Lease;
  private readonly controller = new AbortController();
  private renewal: ReturnType<typeof setTimeout> | undefined;
  private expiry: ReturnType<typeof setTimeout> | undefined;
  private released = false;

  constructor(lease: Lease) {
    this.lease = lease;
    this.lost = this.controller.signal;
    this.watchExpiry();
    if (lease.claimNow) void this.renew();
    else this.schedule(lease.firstRenewalMs);
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    cancel(this.renewal);
    cancel(this.expiry);
    await this.lease.release();
  }

  private schedule(delayMs: number): void {
    this.renewal = setTimeout(() => void this.renew(), delayMs);
  }

  private watchExpiry(): void {
    cancel(this.expiry);
    const left = this.lease.leaseEndsAt - performance.now();
    this.expiry = setTimeout(() => this.lose('no renewal was confirmed before the lease ran out (semaphore backend stalled or failing)'), Math.max(0, left));
  }

  private async renew(): Promise<void> {
    const sentAt = performance.now();
    let live: boolean;
    try {
      live = await this.lease.renew();
    } catch {
      if (this.released || this.lost.aborted) return;
      // Retry while the lease lasts; the expiry timer gives up when it ends.
      this.schedule(Math.min(this.lease.leaseMs / 3, Math.max(50, (this.lease.leaseEndsAt - performance.now()) / 2)));
      return;
    }
    if (this.released || this.lost.aborted) return;
    if (!live) return this.lose('the lease expired and the slot was taken back');
    this.lease.leaseEndsAt = sentAt + this.lease.leaseMs;
    this.watchExpiry();
    this.schedule(this.lease.leaseMs / 3);
  }

  private lose(why: string): void {
    cancel(this.renewal);
    cancel(this.expiry);
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

function cancel(timer: ReturnType<typeof setTimeout> | undefined): void {
  if (timer !== undefined) clearTimeout(timer);
}

/** Waits for `promise` (which never rejects), but no longer than `ms`. */
async function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer!: ReturnType<typeof setTimeout>;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
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
