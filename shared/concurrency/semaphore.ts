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
 * Holders keep their lease with renewals on a timer (./lease.ts); when Redis, or the way to it,
 * stalls, every lease gets time to be renewed once it answers again (./semaphore-lua.ts), so a
 * stall does not take slots from live holders. The scripts are in ./semaphore-lua.ts, the
 * interfaces and defaults in ./semaphore-contract.ts (re-exported here).
 *
 * Web APIs only: this module is bundled into Workers.
 */
import type { Redis } from '@upstash/redis';
import { RedisPermit } from './lease.ts';
import {
  SEMAPHORE_DEFAULTS,
  estimateRetryAfterMs,
  type AcquireOptions,
  type Acquired,
  type Refused,
  type Semaphore,
} from './semaphore-contract.ts';
import { ACQUIRE_SCRIPT, ALREADY_LEFT, MISCONFIGURED, RELEASE_SCRIPT, RENEW_SCRIPT, SCRIPT_KEYS } from './semaphore-lua.ts';

export * from './semaphore-contract.ts';

/**
 * Retry policy for the @upstash/redis client the semaphore uses: one retry after 50 ms instead of the
 * client's default five (~12 s), so an unreachable Redis becomes a quick `unavailable`. Retrying is
 * safe because every semaphore script is idempotent per call id.
 */
export const SEMAPHORE_REDIS_RETRY = { retries: 1, backoff: () => 50 };

/** The part of an @upstash/redis client the semaphore uses (either entry point's `Redis` fits). */
export type SemaphoreRedis = Pick<Redis, 'createScript' | 'exec'>;

/** Options of RedisSemaphore; see SEMAPHORE_DEFAULTS. */
export type RedisSemaphoreOptions = { redis: SemaphoreRedis } & Partial<typeof SEMAPHORE_DEFAULTS>;

type LuaScript = { exec(keys: string[], args: string[]): Promise<unknown> };

const ABORTED = Symbol('aborted');

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
   * Local time until which a slot handed over to this waiter is surely kept for it: Redis keeps it
   * until the waiter's liveness deadline or a first lease after the hand-over, whichever is later,
   * and both started after the last poll was sent.
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
    const settings = { ...SEMAPHORE_DEFAULTS, ...rest };
    // A first lease never outlasts a full one, and at least three renewals fit in either.
    settings.firstLeaseMs = Math.min(settings.firstLeaseMs, settings.leaseMs);
    settings.renewEveryMs = Math.min(settings.renewEveryMs, settings.firstLeaseMs / 3);
    this.settings = settings;
    this.limit = this.settings.limit;
    this.redis = redis;
    const tag = `{${this.settings.prefix}}`;
    this.keys = SCRIPT_KEYS.map((name) => `${tag}:${name}`);
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
        return {
          ok: false,
          reason: 'misconfigured',
          retryAfterMs: 0,
          limitInUse: ahead,
          detail: `the namespace is in use with a limit of ${ahead}, not ${this.limit}`,
          requests: attempt.requests,
        };
      }
      if (granted === ALREADY_LEFT) return this.refuse(attempt, 'aborted', 'the call had already left the semaphore');
      attempt.firstPosition ??= ahead;
      if (granted) return this.grant(attempt, signal, sentAt + this.settings.firstLeaseMs, false);
      if (attempt.position === undefined) onQueued?.(ahead);
      attempt.position = ahead;
      attempt.liveUntil = sentAt + Math.max(livenessMs, this.settings.firstLeaseMs);

      const remaining = attempt.deadline - performance.now();
      if (remaining <= 0) return this.refuse(attempt, 'timeout', `no slot within ${timeoutMs} ms`);
      if (this.requestsLeft(attempt) < this.cycleCost()) {
        return this.refuse(attempt, 'timeout', `gave up after ${attempt.requests} Redis requests`);
      }
      if (signal?.aborted) return this.refuse(attempt, 'aborted', 'aborted while queued');
      if (this.blocking && remaining >= 10) {
        const woken = await this.waitForWake(attempt, Math.min(cycleMs, remaining), signal);
        if (woken === ABORTED) return this.refuse(attempt, 'aborted', 'aborted while queued');
        if (woken) return this.grant(attempt, signal, attempt.liveUntil ?? performance.now(), true);
      } else {
        const delay = Math.min(Math.max(this.pollDelay(attempt), this.spacing(attempt)), remaining);
        if ((await abortable(sleep(delay), signal)) === ABORTED) {
          return this.refuse(attempt, 'aborted', 'aborted while queued');
        }
      }
    }
  }

  /** RENEW: true while the lease is live (also claims a handed-over slot). Waits up to a lease for the answer. */
  private async renew(callId: string): Promise<boolean> {
    return Number(await this.run(null, this.renewScript, callId, 0, this.settings.leaseMs)) === 1;
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

  private run(
    attempt: Attempt | null,
    script: LuaScript,
    callId: string,
    livenessMs: number,
    timeoutMs = this.settings.requestTimeoutMs,
  ): Promise<unknown> {
    if (attempt) attempt.requests++;
    const { limit, leaseMs, firstLeaseMs, tombstoneMs, stallMs } = this.settings;
    const ms = (value: number) => String(Math.ceil(value));
    const args = [callId, this.wakePrefix, String(limit), ms(leaseMs), ms(livenessMs), ms(firstLeaseMs), ms(tombstoneMs), ms(stallMs)];
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
        renewEveryMs: this.settings.renewEveryMs,
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
