/**
 * API-key authentication. Keys are stored as SHA-256 hashes, each bound to one project (the
 * tenant). The project always comes from the key, never from what the model sends.
 *
 * A key may be limited to toolsets (`api_keys.toolsets`; null for all): the caller then carries
 * them, and shared/auth/caller.ts keeps the other tools from it.
 *
 * **Signed keys.** A key is `et_`, 32 random characters and an 11-character tag: the first 8 bytes
 * of an HMAC-SHA256 of the rest, keyed by the deployment's signing secret (`api_key_signing`, one
 * row made by the migrations). A signed key is looked up whatever else its address sent, so no
 * flood of unknown keys from a shared address can refuse or delay it; a key that is not signed
 * (one issued before keys were signed, or a guess) costs a lookup only within a bound per client
 * address (20 unknown keys a minute), so guessing cannot make the database work. An unknown or
 * revoked key is remembered per isolate for a minute and refused without a query.
 *
 * **Freshness.** Verified keys are cached per isolate (./verification.ts): a key verified within
 * `recheckAfterMs` (1 s) is used without a query; past it, reads go on while one shared query
 * re-checks it, and nothing that changes state runs before that query answers (the gate,
 * ./gate.ts). So a key revoked or narrowed in the database, by any means, changes nothing more than
 * `recheckAfterMs` later, on every isolate.
 */
import { and, eq, isNull } from 'drizzle-orm';
import { apiKeys, apiKeySigning, projects } from '../../drizzle/schema.ts';
import { fail, type Failure } from '../core/contract.ts';
import type { Database } from '../core/database.ts';
import { base64url, constantTimeEqual, hashApiKey } from '../core/hashing.ts';
import { API_KEY_PREFIX } from './bearer.ts';
import type { Caller } from './caller.ts';
import type { Verification } from './gate.ts';
import { VERIFICATION_DEFAULTS, VerificationCache, type RecheckContext } from './verification.ts';

/** Defaults of {@link AuthOptions}. */
export const AUTH_DEFAULTS = {
  /** A verified key is used without asking the database for this long; then it is re-checked (./verification.ts). */
  recheckAfterMs: VERIFICATION_DEFAULTS.recheckAfterMs,
  /** Past this since it was last verified, a key is looked up again before anything else. */
  maxStaleMs: 60_000,
  /** An unknown or revoked key is refused without a query for this long. */
  unknownKeyTtlMs: 60_000,
};

/** Unknown keys remembered per isolate; past it the oldest are forgotten (verified ones: ./verification.ts). */
const MAX_UNKNOWN_KEYS = 1_000;

/** How API keys are cached and re-checked. */
export type AuthOptions = Partial<typeof AUTH_DEFAULTS>;

/** The form of every API key: 'et_' and 8 to 128 characters of base64url. */
export const API_KEY_FORMAT = new RegExp(`^${API_KEY_PREFIX}[A-Za-z0-9_-]{8,128}$`);

/** Characters of a signed key's random part, and of its tag (base64url of 24 and 8 bytes). */
const RANDOM_CHARS = 32;
const TAG_CHARS = 11;

/** What authentication needs besides the database: where the call comes from, and its guards. */
export interface AuthContext extends RecheckContext {
  /**
   * The client's address as the deployment knows it (shared/auth/authorize.ts, clientAddressOf):
   * lookups of keys that are not signed are bounded per address. Null when unknown (unbounded).
   */
  clientAddress: string | null;
  /** The bound on unknown-key lookups per address (shared/concurrency/rate-limit.ts, FailedAttempts). */
  failures: {
    /** One of the address's lookups, taken before it starts; undefined when it has none left. */
    take(address: string): { end(failed: boolean): Promise<void> } | undefined;
    /** Milliseconds until the address may look up again. */
    retryAfter(address: string): number;
  };
}

const HINT = "Send the header 'Authorization: Bearer <api key>' with a key issued for your project (keys start with 'et_').";

// Per isolate, keyed by the key itself so a warm call skips hashing. Plain data, bounded: safe at module scope.
const verified = new VerificationCache<Caller>(() => notValid());
const unknown = new Map<string, number>();

/**
 * The verification of an API key (the credential of `Authorization: Bearer <key>`, see
 * ./bearer.ts; undefined when none was sent), or UNAUTHENTICATED (RATE_LIMITED for an address
 * with too many failed attempts with keys that are not signed). Database errors are thrown.
 */
export async function authenticate(
  key: string | undefined,
  db: Database,
  context: AuthContext,
  options: AuthOptions = {},
): Promise<Verification | Failure> {
  const settings = { ...AUTH_DEFAULTS, ...options };
  if (!key) return fail('UNAUTHENTICATED', 'The request has no API key.', { hint: HINT });
  if (!API_KEY_FORMAT.test(key)) {
    return fail('UNAUTHENTICATED', "The API key does not have the form of a key: 'et_' followed by 8 to 128 letters, digits, '-' or '_'.", {
      hint: HINT,
    });
  }
  const recheck = { ...context, recheckAfterMs: settings.recheckAfterMs };
  const cached = verified.get(key);
  const lookUpKey = async () => lookUp(db, await hashApiKey(key));
  if (cached && Date.now() - cached.verifiedAt < settings.maxStaleMs) {
    return verified.verification(key, cached, lookUpKey, recheck);
  }
  if ((unknown.get(key) ?? 0) > Date.now()) return notValid();

  // A signed key is looked up whatever its address did; any other costs a lookup within the
  // address's bound. Whether it is signed is asked alongside the lookup (the signing secret is read
  // once per isolate), so every lookup first takes one of the address's attempts (a burst cannot
  // outrun the bound), which a signed key gives back as soon as it is known to be signed; from an
  // address with none left, whether the key is signed decides whether it is looked up at all.
  const address = context.clientAddress && !cached ? context.clientAddress : undefined;
  const signing = address ? isSigned(key, db) : undefined;
  const attempt = address ? context.failures.take(address) : undefined;
  if (address && !attempt && !(await signing)) return tooManyFailures(context.failures.retryAfter(address));
  if (attempt && signing)
    void signing.then(
      (signed) => (signed ? attempt.end(false) : undefined),
      () => undefined,
    );
  const verifiedAt = Date.now();
  let caller: Caller | undefined;
  let signed: boolean | undefined;
  try {
    [caller, signed] = await Promise.all([lookUpKey(), signing]);
  } catch (error) {
    await attempt?.end(false);
    throw error;
  }
  if (attempt) context.waitUntil(attempt.end(!caller && !signed));
  if (!caller) {
    verified.forget(key);
    remember(key, settings);
    return notValid();
  }
  unknown.delete(key);
  const entry = verified.remember(key, caller, verifiedAt);
  return verified.verification(key, entry, lookUpKey, recheck);
}

/** The caller a key hash belongs to (frozen), or undefined when no live key has it. */
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
  return Object.freeze({
    project: Object.freeze({ id: row.projectId, name: row.projectName }),
    keyId: row.keyId,
    rateLimitPerMinute: row.rateLimitPerMinute,
    credential: 'api_key' as const,
    ...(row.toolsets && { toolsets: Object.freeze([...row.toolsets]) }),
  });
}

function remember(key: string, settings: typeof AUTH_DEFAULTS): void {
  if (unknown.size >= MAX_UNKNOWN_KEYS) unknown.delete(unknown.keys().next().value!);
  unknown.set(key, Date.now() + settings.unknownKeyTtlMs);
}

function notValid(): Failure {
  return fail('UNAUTHENTICATED', 'The API key is not valid (unknown or revoked).', { hint: HINT });
}

function tooManyFailures(retryAfterMs: number): Failure {
  return fail(
    'RATE_LIMITED',
    `Too many unknown API keys were sent from this address. Wait ${Math.ceil(retryAfterMs / 1000)} s before trying again. Keys issued by this deployment since keys are signed are never refused this way: ask for a new key (npm run keys -- create) if yours is older.`,
    {
      hint: HINT,
      details: { reason: 'failed_authentications', retry_after_ms: retryAfterMs },
    },
  );
}

// The deployment's signing secret, read once per isolate (plain data: safe at module scope), and
// the HMAC key made from it.
let signingKey: Promise<CryptoKey | undefined> | undefined;

/** The HMAC key of the deployment's signing secret; undefined when the database has none (a deployment not migrated yet). */
async function hmacKey(db: Database): Promise<CryptoKey | undefined> {
  signingKey ??= signingSecret(db).then(
    (secret) =>
      secret === undefined
        ? undefined
        : crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']),
    (error: unknown) => {
      signingKey = undefined;
      throw error;
    },
  );
  return signingKey;
}

/** The deployment's signing secret, from the database. */
async function signingSecret(db: Database): Promise<string | undefined> {
  const [row] = await db.select({ secret: apiKeySigning.secret }).from(apiKeySigning).limit(1);
  return row?.secret;
}

/** The tag of a key's random part: the first 8 bytes of its HMAC, base64url. */
async function tagOf(random: string, key: CryptoKey): Promise<string> {
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(API_KEY_PREFIX + random));
  return base64url(new Uint8Array(mac, 0, 8));
}

/** Whether `key` carries this deployment's tag (a key it issued); false for older keys and guesses. */
async function isSigned(key: string, db: Database): Promise<boolean> {
  const body = key.slice(API_KEY_PREFIX.length);
  if (body.length !== RANDOM_CHARS + TAG_CHARS) return false;
  const hmac = await hmacKey(db);
  return hmac !== undefined && constantTimeEqual(await tagOf(body.slice(0, RANDOM_CHARS), hmac), body.slice(RANDOM_CHARS));
}

/**
 * A new signed API key of this deployment: 'et_', 24 random bytes and the tag, base64url (46
 * characters). Throws when the database has no signing secret (run the migrations).
 */
async function generateApiKey(db: Database): Promise<string> {
  const hmac = await hmacKey(db);
  if (!hmac) throw new Error('The database has no API key signing secret: apply the migrations (npm run db:migrate) first.');
  const random = base64url(crypto.getRandomValues(new Uint8Array(24)));
  return API_KEY_PREFIX + random + (await tagOf(random, hmac));
}

/**
 * Stores an API key of a project (its SHA-256 and its first characters, never the key) and
 * answers the key and its row id: a new signed key unless `key` is given (a key of the operator's
 * choice, such as DEV_API_KEY, works as an unsigned one).
 */
export async function issueApiKey(
  db: Database,
  { projectId, name, toolsets = null, key }: { projectId: string; name: string; toolsets?: readonly string[] | null; key?: string },
): Promise<{ key: string; id: string }> {
  const issued = key ?? (await generateApiKey(db));
  const [row] = await db
    .insert(apiKeys)
    .values({
      projectId,
      keyHash: await hashApiKey(issued),
      keyPrefix: issued.slice(0, KEY_PREFIX_LENGTH),
      name,
      toolsets: toolsets && [...toolsets],
    })
    .returning({ id: apiKeys.id });
  return { key: issued, id: row!.id };
}

/** Characters of a key kept in `api_keys.key_prefix`, to recognise it in listings. */
export const KEY_PREFIX_LENGTH = 8;

/** Hashing and comparing keys are written once, in the ground layer, for every layer that stores or checks a secret. */
export { constantTimeEqual, hashApiKey };
