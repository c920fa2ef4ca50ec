/**
 * An in-process FIFO semaphore with the same interface as RedisSemaphore, for local development
 * without redis-server. It caps concurrency within one process only (one isolate), never globally.
 */
import {
  SEMAPHORE_DEFAULTS,
  estimateRetryAfterMs,
  type AcquireOptions,
  type Acquired,
  type Permit,
  type Refused,
  type Semaphore,
} from './semaphore-contract.ts';

/** Options of MemorySemaphore; defaults as RedisSemaphore's. */
export type MemorySemaphoreOptions = {
  limit?: number;
  queueTimeoutMs?: number;
};

type Waiter = { grant(): void; position(): number };

/**
 * Grants slots strictly in order of `acquire` calls. A release hands its slot straight to the oldest
 * waiter. Permits never lapse: there is no lease to lose.
 */
export class MemorySemaphore implements Semaphore {
  readonly limit: number;
  private readonly queueTimeoutMs: number;
  private held = 0;
  private readonly waiters: Waiter[] = [];

  constructor(options: MemorySemaphoreOptions = {}) {
    this.limit = options.limit ?? SEMAPHORE_DEFAULTS.limit;
    this.queueTimeoutMs = options.queueTimeoutMs ?? SEMAPHORE_DEFAULTS.queueTimeoutMs;
  }

  acquire(_callId: string, options: AcquireOptions = {}): Promise<Acquired | Refused> {
    const { timeoutMs = this.queueTimeoutMs, signal, onQueued } = options;
    const startedAt = performance.now();
    if (signal?.aborted) return Promise.resolve(refused('aborted', 0, undefined, 'aborted before queueing'));
    if (this.held < this.limit && this.waiters.length === 0) {
      this.held++;
      return Promise.resolve(this.acquired(startedAt, 0));
    }
    const firstPosition = this.waiters.length;
    onQueued?.(firstPosition);
    return new Promise((resolve) => {
      const leave = (reason: 'timeout' | 'aborted', detail: string) => {
        const position = waiter.position();
        this.waiters.splice(position, 1);
        settle();
        const retryAfterMs =
          reason === 'aborted' ? 0 : estimateRetryAfterMs(firstPosition, position, performance.now() - startedAt, this.queueTimeoutMs);
        resolve(refused(reason, retryAfterMs, position, `${detail}; ${position} waiting ahead`));
      };
      const onAbort = () => leave('aborted', 'aborted while queued');
      const timer = setTimeout(() => leave('timeout', `no slot within ${timeoutMs} ms`), timeoutMs);
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        grant: () => {
          settle();
          resolve(this.acquired(startedAt, firstPosition));
        },
        position: () => this.waiters.indexOf(waiter),
      };
      this.waiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private acquired(startedAt: number, queueDepth: number): Acquired {
    let released = false;
    const permit: Permit = {
      lapse: () => undefined,
      release: async () => {
        if (released) return;
        released = true;
        // Hand the slot straight to the oldest waiter, or free it.
        const next = this.waiters.shift();
        if (next) next.grant();
        else this.held--;
      },
    };
    return { ok: true, permit, queuedMs: performance.now() - startedAt, queueDepth, requests: 0 };
  }
}

function refused(reason: Refused['reason'], retryAfterMs: number, position: number | undefined, detail: string): Refused {
  return { ok: false, reason, retryAfterMs, position, detail, requests: 0 };
}
