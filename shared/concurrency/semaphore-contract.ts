/**
 * What every semaphore promises (RedisSemaphore in ./semaphore.ts, MemorySemaphore in
 * ./memory-semaphore.ts), and the defaults of their options.
 */

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

/**
 * Why a held slot cannot be vouched for: `taken_back` when Redis answered a renewal that the lease
 * had run out and the slot was reaped (another call may run in it), for good; `unconfirmed` while
 * the lease has run out by the holder's own estimate and no renewal was confirmed since (Redis slow
 * or unreachable), until a late confirmation vouches for it again.
 */
export type LeaseLapse = { reason: 'taken_back' | 'unconfirmed'; detail: string };

/** A held slot. Release it in `finally`, even when the work failed or the lease lapsed. */
export interface Permit {
  /**
   * Undefined while the lease is vouched for; otherwise why not. The lease is kept in the
   * background, whatever the holder does; a lapse never stops the holder's work (work that has
   * started cannot give back what it took of the limit, and stopping it half-way would leave it
   * half-done): the holder records it.
   */
  lapse(): LeaseLapse | undefined;
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
  /**
   * A crashed holder's slot comes back after this. Live holders renew every `renewEveryMs`, so a
   * lease survives four renewals in a row that are lost or answered late (Upstash's tail latency,
   * a CPU-starved isolate); a longer silence of the whole backend is a stall (`stallMs`).
   */
  leaseMs: 15_000,
  /**
   * The lease of a fresh grant, until its first renewal extends it to `leaseMs`. Short, so that a
   * grant nobody takes up (an ACQUIRE that reached Redis after its caller had gone, its leave lost
   * with the isolate) holds a slot only this long; long enough to outlast `stallMs` after the first
   * renewal was sent. Also the time a waiter woken for a handed-over slot has to claim it, and the
   * grace every lease gets after a stall.
   */
  firstLeaseMs: 6_000,
  /**
   * How often a holder renews its lease, the first time a third of this after the grant. Renewals
   * go out on a timer, whatever the holder does and whether or not earlier ones were answered.
   */
  renewEveryMs: 3_000,
  /**
   * While anyone holds or waits, Redis hears from them every few seconds. A silence longer than
   * this means Redis (or the way to it) stalled, e.g. frozen or a REST endpoint that answered
   * nothing: nobody could renew meanwhile, so after it every lease and waiter gets `firstLeaseMs`
   * to be renewed before anything is reaped.
   */
  stallMs: 4_000,
  /**
   * How long Redis remembers a call that left before its ACQUIRE ran (held no slot, had no ticket):
   * that ACQUIRE, arriving late, then takes nothing. Keys outlive their last deadline this long.
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
  /** A waiter is reaped when it has not polled for its announced wait plus this. */
  livenessGraceMs: 1_500,
  /** Poll mode: a waiter polls at half its expected time to its turn, within these bounds. */
  pollMinMs: 20,
  pollMaxMs: 1_000,
  /**
   * Cap on the Redis requests one acquire makes (first ACQUIRE, waits, polls, claim, leave), so a
   * waiting call stays far below a Worker's ~1000 subrequests; waits stretch to fit the cap.
   */
  maxRequestsPerAcquire: 50,
  /** A Redis request of an acquire (other than a BLPOP's own wait) taking longer counts as a failure. */
  requestTimeoutMs: 5_000,
  /** retryAfterMs suggested when Redis fails. */
  unavailableRetryAfterMs: 1_000,
};

/**
 * Estimates when a refused waiter may get a slot, from how fast the queue drained ahead of it
 * (`fallbackMs` when it did not move).
 */
export function estimateRetryAfterMs(firstPosition: number, lastPosition: number, waitedMs: number, fallbackMs: number): number {
  const drained = firstPosition - lastPosition;
  const estimate = drained > 0 && waitedMs > 0 ? ((lastPosition + 1) * waitedMs) / drained : fallbackMs;
  return Math.round(Math.min(Math.max(estimate, 100), 60_000));
}
