/**
 * The gate, as a type: what an authorised request may do with the database, and when.
 *
 * A request's credential (an API key, an OAuth token's grant) becomes a {@link Gate}. Its
 * `caller` is the caller as last verified: an immutable value, replaced (never changed) when the
 * credential is verified again. Its database is reached two ways only:
 *
 * - `reader`: a client whose every statement runs in a read-only transaction (Postgres itself
 *   refuses a write through it). Reads start at once, alongside the credential's re-check; their
 *   answer waits for {@link Gate.confirm}, so a credential revoked meanwhile reads nothing out.
 * - {@link Gate.pass}: resolves, once the credential is confirmed valid now (verified within the
 *   re-check period of now, see ./verification.ts), to the fresh caller and the client that
 *   writes. Nothing that writes or changes state can run before it: there is no other writable
 *   client for the tenant's data.
 *
 * The `ledger` is the system's own bookkeeping about a call (its trace and refusal rows, its
 * idempotency record), written whatever the call's scope; never the tenant's data. Only the call
 * report and the idempotency stage use it (eslint.config.js holds that rule).
 */
import type { Redis } from '@upstash/redis';
import type { Failure } from '../core/contract.ts';
import type { Database } from '../core/database.ts';
import type { Caller } from './caller.ts';

/** A credential as the gate sees it: the caller as last verified, and how to confirm it now. */
export interface Verification {
  /** The caller as last verified (frozen). */
  current(): Caller;
  /** The caller as verified within the re-check period of now, or why it is not valid now. Never rejects. */
  confirm(): Promise<Caller | Failure>;
}

/** The database clients of one request: the read-only one and the one that writes (see {@link Gate}). */
export interface GateClients {
  /** Every statement in a read-only transaction. */
  reader: Database;
  /** Reached through {@link Gate.pass} only (and the ledger). */
  writer: Database;
  /** Undefined when the deployment has no Redis (local development, or the in-process semaphore). */
  redis: Redis | undefined;
}

/** What passing the gate gives: the caller as confirmed now, and the client that writes. */
export interface Passed {
  ok: true;
  caller: Caller;
  db: Database;
}

/** Why a caller may not do what is asked (a tool outside its toolsets, a write on a read-only grant), or undefined when it may. */
export type Judge = (caller: Caller) => Failure | undefined;

/** An authorised request: its caller, its readers, and the one gate before anything that changes state. */
export class Gate {
  readonly ok = true;
  /** The request's read-only client: its answers wait for {@link Gate.confirm}. */
  readonly reader: Database;
  /** The request's Redis client (admission: the rate limit and the semaphore), when there is one. */
  readonly redis: Redis | undefined;
  readonly #verification: Verification;
  readonly #writer: Database;

  constructor(verification: Verification, { reader, writer, redis }: GateClients) {
    this.#verification = verification;
    this.#writer = writer;
    this.reader = reader;
    this.redis = redis;
  }

  /** The caller as last verified: an immutable value, replaced when the credential is verified again. */
  get caller(): Caller {
    return this.#verification.current();
  }

  /**
   * Resolves once the credential is valid now: to the caller as confirmed, or to why not (revoked,
   * unreachable, or, with `judge`, a refreshed scope that no longer allows what is asked). Costs
   * nothing when the credential was verified within the re-check period; else one query, shared.
   */
  async confirm(judge?: Judge): Promise<Caller | Failure> {
    const caller = await this.#verification.confirm();
    if ('error' in caller) return caller;
    return judge?.(caller) ?? caller;
  }

  /**
   * THE gate: resolves to the caller as confirmed now and the client that writes, or to why the
   * credential may not change anything now (with `judge`: may not do what is asked).
   */
  async pass(judge?: Judge): Promise<Passed | Failure> {
    const caller = await this.confirm(judge);
    if ('error' in caller) return caller;
    return { ok: true, caller, db: this.#writer };
  }

  /**
   * Runs a read at once, alongside the credential's confirmation, and answers it only once the
   * credential is confirmed: its result, or why the credential is not valid now.
   */
  async read<T>(work: (db: Database, caller: Caller) => Promise<T>): Promise<T | Failure> {
    const [result, confirmed] = await Promise.all([work(this.reader, this.caller), this.confirm()]);
    return 'error' in confirmed ? confirmed : result;
  }

  /** The system's own records of the call (trace, refusals, idempotency records): see the module's comment. */
  get ledger(): Database {
    return this.#writer;
  }
}
