/**
 * How a verified credential stays true, written once for API keys (./keys.ts) and OAuth grants
 * (./grants.ts): per isolate, a credential found valid is kept with the moment the query that
 * verified it was sent. It is trusted as is for `recheckAfterMs`; past that, {@link VerificationCache.confirm}
 * verifies it again (one query, shared by every request of the isolate that asks meanwhile) and
 * resolves only once it was verified within `recheckAfterMs` of now. So nothing that waits for a
 * confirmation (the gate, ./gate.ts) runs more than `recheckAfterMs` after the credential was revoked
 * or narrowed in the database, however long the request that holds it has been running.
 */
import { fail, type Failure } from '../core/contract.ts';

/** Defaults of {@link VerificationCache}. */
export const VERIFICATION_DEFAULTS = {
  /** A credential verified this recently is used without asking the database; past it, confirming it costs one query. */
  recheckAfterMs: 1_000,
  /** Entries kept per isolate (per cache): past it the oldest are forgotten, so a flood of credentials cannot grow it. */
  maxEntries: 1_000,
  /** Re-checks one confirmation makes before it gives up, when each one answers only after the credential went stale again. */
  maxRechecks: 3,
};

/** One credential as last verified. */
export interface Verified<V> {
  /** What the database said of it, frozen: never changed, only replaced by the next verification. */
  value: V;
  /** When the query that verified it was sent (epoch ms). */
  verifiedAt: number;
  /** Set once a re-check found it revoked: every holder of the entry gets this failure from then on. */
  revoked?: Failure;
  /** The re-check under way, if any: the isolate's requests share it. */
  recheck?: Promise<Failure | undefined>;
}

/** What a re-check needs from the request that starts it. */
export interface RecheckContext {
  /** Keeps the re-check running after the request that started it was answered (Workers: `ctx.waitUntil`). */
  waitUntil(work: Promise<unknown>): void;
  /** The failure of a re-check that could not reach the database (a transient DATABASE_ERROR). */
  checkFailed(error: unknown): Failure;
}

/**
 * Verified credentials of one kind, by an id of the caller's choice (the key itself, a grant id).
 * `lookUp` asks the database: the credential's value, or undefined when it is no longer valid.
 */
export class VerificationCache<V> {
  readonly #entries = new Map<string, Verified<V>>();
  readonly #revoked: (id: string) => Failure;

  /** `revoked`: the failure of a credential a re-check found revoked. */
  constructor(revoked: (id: string) => Failure) {
    this.#revoked = revoked;
  }

  /** The entry of `id`, if one is kept. */
  get(id: string): Verified<V> | undefined {
    return this.#entries.get(id);
  }

  /** Keeps `value`, verified by a query sent at `verifiedAt`; the oldest entry goes when the cache is full. */
  remember(id: string, value: V, verifiedAt: number): Verified<V> {
    if (!this.#entries.has(id) && this.#entries.size >= VERIFICATION_DEFAULTS.maxEntries)
      this.#entries.delete(this.#entries.keys().next().value!);
    const entry: Verified<V> = { value: Object.freeze(value), verifiedAt };
    this.#entries.set(id, entry);
    return entry;
  }

  /** Forgets `id` (revoked): a later request looks it up again. */
  forget(id: string): void {
    this.#entries.delete(id);
  }

  /** `entry` as a request holds it: its value as last verified, and its {@link confirm}ation. */
  verification(
    id: string,
    entry: Verified<V>,
    lookUp: () => Promise<V | undefined>,
    context: RecheckContext & { recheckAfterMs?: number },
  ): { current(): V; confirm(): Promise<V | Failure> } {
    return { current: () => entry.value, confirm: () => this.confirm(id, entry, lookUp, context) };
  }

  /**
   * Resolves to the entry's value once it was verified within `recheckAfterMs` of now: at once when
   * it was, else after a re-check through `lookUp` (joined when one is under way); to a failure when
   * a re-check found it revoked or could not reach the database. Never rejects.
   */
  async confirm(
    id: string,
    entry: Verified<V>,
    lookUp: () => Promise<V | undefined>,
    { recheckAfterMs = VERIFICATION_DEFAULTS.recheckAfterMs, ...context }: RecheckContext & { recheckAfterMs?: number },
  ): Promise<V | Failure> {
    const startedAt = Date.now();
    for (let rechecks = 0; ; rechecks++) {
      if (entry.revoked) return entry.revoked;
      const age = Date.now() - entry.verifiedAt;
      // Fresh: verified within the period, or by a query sent since this confirmation began and
      // within the period every deployment promises (a period of 0 re-checks every confirmation).
      if (age < recheckAfterMs || (entry.verifiedAt >= startedAt && age < VERIFICATION_DEFAULTS.recheckAfterMs)) return entry.value;
      if (rechecks === VERIFICATION_DEFAULTS.maxRechecks) return stale(recheckAfterMs);
      if (!entry.recheck) {
        entry.recheck = this.#recheck(id, entry, lookUp, context).finally(() => (entry.recheck = undefined));
        context.waitUntil(entry.recheck);
      }
      const failure = await entry.recheck;
      if (failure && failure !== entry.revoked) return failure;
    }
  }

  /** Looks the credential up again: refreshes the entry, or marks it revoked and forgets it. Never rejects. */
  async #recheck(
    id: string,
    entry: Verified<V>,
    lookUp: () => Promise<V | undefined>,
    context: RecheckContext,
  ): Promise<Failure | undefined> {
    const sentAt = Date.now();
    let value: V | undefined;
    try {
      value = await lookUp();
    } catch (error) {
      return context.checkFailed(error);
    }
    if (value === undefined) {
      entry.revoked = this.#revoked(id);
      if (this.#entries.get(id) === entry) this.#entries.delete(id);
      return entry.revoked;
    }
    entry.value = Object.freeze(value);
    entry.verifiedAt = Math.max(entry.verifiedAt, sentAt);
    return undefined;
  }
}

/** The credential's re-checks kept answering after it went stale again (a database slower than the re-check period). */
function stale(recheckAfterMs: number): Failure {
  return fail(
    'DATABASE_ERROR',
    `The credential could not be confirmed within ${recheckAfterMs} ms, as every change of state requires: the database answered too slowly. Repeat the call in a moment.`,
    { retryable: true, status: 503, details: { reason: 'credential_unconfirmed', retry_after_ms: 1_000 } },
  );
}
