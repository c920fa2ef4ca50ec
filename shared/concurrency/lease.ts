/**
 * How a RedisSemaphore holder keeps its lease: renewals on a timer of their own, never waiting on
 * the holder's work nor on earlier renewals, each confirmation extending the holder's estimate of
 * its lease from when that renewal was sent.
 */
import type { LeaseLapse, Permit } from './semaphore-contract.ts';

/** What a permit needs to keep its lease. */
export type LeaseKeeping = {
  /**
   * One RENEW request: true while the lease is live, false once Redis reaped it. Rejects when it
   * fails, or is still unanswered after a whole lease (an answer could not help any more).
   */
  renew(): Promise<boolean>;
  /** Leaves the semaphore (never rejects). */
  release(): Promise<void>;
  leaseMs: number;
  renewEveryMs: number;
  /**
   * The holder's estimate of when the lease runs out: when the granting request was sent, plus the
   * lease it got. Never later than Redis's own deadline, which starts when the request arrives.
   */
  leaseEndsAt: number;
  /** Renew at once: a handed-over slot must be claimed before the waiter's liveness deadline. */
  claimNow: boolean;
};

/**
 * A lease renewed in the background every `renewEveryMs` (the first time at a third of it, or at
 * once to claim a handed-over slot). A renewal answered late still counts, from its send time.
 * Redis answering that the lease was reaped is final.
 */
export class RedisPermit implements Permit {
  private readonly lease: LeaseKeeping;
  private confirmedUntil: number;
  private takenBack = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private released = false;

  constructor(lease: LeaseKeeping) {
    this.lease = lease;
    this.confirmedUntil = lease.leaseEndsAt;
    this.schedule(lease.claimNow ? 0 : lease.renewEveryMs / 3);
  }

  lapse(): LeaseLapse | undefined {
    if (this.takenBack)
      return { reason: 'taken_back', detail: 'the lease ran out before a renewal reached Redis, and the slot was taken back' };
    if (performance.now() > this.confirmedUntil) {
      return {
        reason: 'unconfirmed',
        detail: 'no renewal was confirmed before the lease ran out (the semaphore backend is slow or unreachable)',
      };
    }
    return undefined;
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.lease.release();
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      if (this.released || this.takenBack) return;
      this.schedule(this.lease.renewEveryMs);
      void this.renew();
    }, delayMs);
  }

  private async renew(): Promise<void> {
    const sentAt = performance.now();
    let live: boolean;
    try {
      live = await this.lease.renew();
    } catch {
      return; // the next renewal is on its way already
    }
    if (this.released) return;
    if (!live) {
      this.takenBack = true;
      if (this.timer !== undefined) clearTimeout(this.timer);
      return;
    }
    this.confirmedUntil = Math.max(this.confirmedUntil, sentAt + this.lease.leaseMs);
  }
}
