/**
 * API-key authentication. Keys are stored as SHA-256 hashes, each bound to one project (the
 * tenant). The project always comes from the key, never from what the model sends.
 *
 * A key may be limited to toolsets (`api_keys.toolsets`; null for all): the caller then carries
 * them, and shared/auth/caller.ts keeps the other tools from it.
 *
 * Per isolate, verified keys are cached, and so are keys found unknown or revoked. A cached key is
 * trusted as is for `recheckAfterMs` (1 s); after that each call re-checks it in the database
 * while the call goes on (concurrently with admission: no round trip is added in series). The
 * re-check refreshes the caller's toolsets, and nothing that changes state runs before it
 * confirms the key (shared/auth/caller.ts, confirmedFor). So a key revoked or narrowed in the
 * database, by any means, is stopped or narrowed everywhere within about `recheckAfterMs` plus one query.
 *
 * Guessing is cheap to refuse: a key of the wrong form is refused without hashing or a query, an
 * unknown key seen recently without a query, and a client address whose unknown keys cost 20
 * queries within a minute gets 429 before any further query. (Refusals that cost no query do not
 * count: a client sending no key, or a malformed one, is told so every time.)
 */
import { and, eq, isNull } from 'drizzle-orm';
import { apiKeys, projects } from '../../drizzle/schema.ts';
import { fail, type Failure } from '../core/contract.ts';
import type { Database } from '../core/database.ts';
import { constantTimeEqual, hashApiKey } from '../core/hashing.ts';
import { API_KEY_PREFIX } from './bearer.ts';
import type { Authenticated, Caller } from './caller.ts';

/** Defaults of {@link AuthOptions}. */
export const AUTH_DEFAULTS = {
  /** A verified key is used without asking the database for this long; then each call re-checks it. */
  recheckAfterMs: 1_000,
  /** Past this since it was last verified, a key is looked up again before anything else. */
  maxStaleMs: 60_000,
  /** An unknown or revoked key is refused without a query for this long. */
  unknownKeyTtlMs: 60_000,
  /** Keys cached per isolate (each cache); a flood of random keys cannot grow it further. */
  maxCachedKeys: 1_000,
};

export type AuthOptions = Partial<typeof AUTH_DEFAULTS>;

/** The form of every API key: 'et_' and 8 to 128 characters of base64url. */
export const API_KEY_FORMAT = new RegExp(`^${API_KEY_PREFIX}[A-Za-z0-9_-]{8,128}$`);

/** What authentication needs besides the database: where the call comes from, and its guards. */
export interface AuthContext {
  /**
   * The client's address (`CF-Connecting-IP`, which Cloudflare and wrangler dev always set): lookups
   * of unknown keys are bounded per address. Requests without one (tests calling the worker
   * directly) are not bounded.
   */
  clientAddress: string | null;
  /** The bound on unknown-key lookups per address (shared/concurrency/rate-limit.ts, FailedAttempts). */
  failures: { blockedFor(address: string): number; record(address: string): Promise<void> };
  /** Keeps counting a failure, and a re-check, running after the answer (Workers: `ctx.waitUntil`). */
  waitUntil(work: Promise<unknown>): void;
  /** The failure a re-check that could not reach the database answers (a DATABASE_ERROR). */
  checkFailed(error: unknown): Failure;
}

type CachedKey = { keyHash: string; caller: Caller; verifiedAt: number; recheck?: Promise<Failure | undefined> };

// Per isolate, keyed by the key itself so a warm call skips hashing. Plain data: safe at module scope.
const verifiedKeys = new Map<string, CachedKey>();
const unknownKeys = new Map<string, number>();

const HINT = "Send the header 'Authorization: Bearer <api key>' with a key issued for your project (keys start with 'et_').";

/**
 * Resolves the caller of an API key (the credential of `Authorization: Bearer <key>`, see
 * shared/auth/bearer.ts; undefined when none was sent), or answers UNAUTHENTICATED
 * (RATE_LIMITED for an address with too many failed attempts). Database errors are thrown.
 */
export async function authenticate(
  key: string | undefined,
  db: Database,
  context: AuthContext,
  options: AuthOptions = {},
): Promise<Authenticated | Failure> {
  const settings = { ...AUTH_DEFAULTS, ...options };
  if (!key) return fail('UNAUTHENTICATED', 'The request has no API key.', { hint: HINT });
  if (!API_KEY_FORMAT.test(key)) {
    return fail('UNAUTHENTICATED', "The API key does not have the form of a key: 'et_' followed by 8 to 128 letters, digits, '-' or '_'.", {
      hint: HINT,
    });
  }

  const now = Date.now();
  const cached = verifiedKeys.get(key);
  if (cached && now - cached.verifiedAt < settings.maxStaleMs) {
    if (now - cached.verifiedAt < settings.recheckAfterMs) return { ok: true, ...cached.caller, confirmed: Promise.resolve(undefined) };
    if (!cached.recheck) {
      cached.recheck = recheck(key, cached, db, context, settings).finally(() => (cached.recheck = undefined));
      // Its query belongs to this request, and later calls of the key wait on it too: it must
      // finish even when this request is answered first (Workers cancel a finished request's I/O).
      context.waitUntil(cached.recheck);
    }
    // The caller as last verified, refreshed by the re-check: a key narrowed meanwhile is judged
    // on its new toolsets by the gate (confirmedFor), from the first call the re-check answers.
    const caller: Authenticated = { ok: true, ...cached.caller, confirmed: Promise.resolve(undefined) };
    caller.confirmed = cached.recheck.then((failure) => {
      if (!failure)
        Object.assign(caller, {
          toolsets: cached.caller.toolsets,
          readOnly: cached.caller.readOnly,
          rateLimitPerMinute: cached.caller.rateLimitPerMinute,
        });
      return failure;
    });
    return caller;
  }
  if ((unknownKeys.get(key) ?? 0) > now) return notValid();
  // Only guesses cost a query: a key this isolate verified before is looked up whatever its address.
  const address = context.clientAddress;
  const blockedMs = address && !cached ? context.failures.blockedFor(address) : 0;
  if (blockedMs > 0) return tooManyFailures(blockedMs);

  const keyHash = await hashApiKey(key);
  const verifiedAt = Date.now();
  const caller = await lookUp(db, keyHash);
  if (!caller) {
    forget(key, settings);
    if (address) context.waitUntil(context.failures.record(address));
    return notValid();
  }
  remember(key, { keyHash, caller, verifiedAt }, settings);
  return { ok: true, ...caller, confirmed: Promise.resolve(undefined) };
}

/**
 * Looks a cached key up again; forgets it when it was revoked. Never rejects: a failed check is a
 * failure of the calls waiting on it (the key cannot be vouched for).
 */
async function recheck(
  key: string,
  cached: CachedKey,
  db: Database,
  context: AuthContext,
  settings: typeof AUTH_DEFAULTS,
): Promise<Failure | undefined> {
  const sentAt = Date.now();
  let caller: Caller | undefined;
  try {
    caller = await lookUp(db, cached.keyHash);
  } catch (error) {
    return context.checkFailed(error);
  }
  if (!caller) {
    forget(key, settings);
    return notValid();
  }
  cached.caller = caller;
  cached.verifiedAt = Math.max(cached.verifiedAt, sentAt);
  return undefined;
}

/** The caller a key hash belongs to, or undefined when no live key has it. */
async function lookUp(db: Database, keyHash: string): Promise<Caller | undefined> {
  const [row] = await db
    .select({
      keyId: apiKeys.id,
      keyHash: apiKeys.keyHash,
      projectId: projects.id,
      projectName: projects.name,
      rateLimitPerMinute: projects.rateLimitPerMinute,
      toolsets: apiKeys.toolsets,
    })
    .from(apiKeys)
    .innerJoin(projects, eq(projects.id, apiKeys.projectId))
    .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
    .limit(1);
  if (!row || !constantTimeEqual(row.keyHash, keyHash)) return undefined;
  const caller: Caller = {
    project: { id: row.projectId, name: row.projectName },
    keyId: row.keyId,
    rateLimitPerMinute: row.rateLimitPerMinute,
    credential: 'api_key',
  };
  if (row.toolsets) caller.toolsets = row.toolsets;
  return caller;
}

function remember(key: string, entry: CachedKey, settings: typeof AUTH_DEFAULTS): void {
  if (verifiedKeys.size >= settings.maxCachedKeys) verifiedKeys.clear();
  verifiedKeys.set(key, entry);
  unknownKeys.delete(key);
}

function forget(key: string, settings: typeof AUTH_DEFAULTS): void {
  verifiedKeys.delete(key);
  if (unknownKeys.size >= settings.maxCachedKeys) unknownKeys.clear();
  unknownKeys.set(key, Date.now() + settings.unknownKeyTtlMs);
}

function notValid(): Failure {
  return fail('UNAUTHENTICATED', 'The API key is not valid (unknown or revoked).', { hint: HINT });
}

function tooManyFailures(retryAfterMs: number): Failure {
  return fail(
    'RATE_LIMITED',
    `Too many failed authentication attempts from this address. Wait ${Math.ceil(retryAfterMs / 1000)} s before trying again, with a valid API key.`,
    {
      hint: HINT,
      details: { reason: 'failed_authentications', retry_after_ms: retryAfterMs },
    },
  );
}

/** A new random API key: 'et_' and 32 random bytes, base64url. */
export function generateApiKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return (
    'et_' +
    btoa(String.fromCharCode(...bytes))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '')
  );
}

/** Hashing and comparing keys are written once, in the ground layer, for every layer that stores or checks a secret. */
export { constantTimeEqual, hashApiKey };
