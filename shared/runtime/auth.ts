/**
 * API-key authentication. Keys are stored as SHA-256 hashes, each bound to one project (the
 * tenant). The project always comes from the key, never from what the model sends.
 */
import { and, eq, isNull } from 'drizzle-orm';
import { apiKeys, projects } from '../../drizzle/schema.ts';
import { fail, type Failure } from '../core/contract.ts';
import type { Database } from './db.ts';
import type { Project } from '../core/tool.ts';

export interface AuthOptions {
  /** How long a verified key is trusted without asking the database again. */
  cacheTtlMs?: number;
}

const DEFAULT_CACHE_TTL_MS = 60_000;
/** Bounds the per-isolate cache so a flood of random keys cannot grow it without limit. */
const MAX_CACHED_KEYS = 1_000;

const KEY_PREFIX = 'et_';
const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Who is calling: the project (tenant) and the key, with the project's own rate limit. */
export interface Caller {
  project: Project;
  keyId: string;
  /** Calls per minute per key; null means the deployment default. */
  rateLimitPerMinute: number | null;
}

// Keyed by the key itself so a warm call skips hashing (SHA-256 costs more than the rest of auth).
type CachedKey = { key: string; caller: Caller; expiresAt: number };
const verifiedKeys = new Map<string, CachedKey>();

const HINT = "Send the header 'Authorization: Bearer <api key>' with a key issued for your project (keys start with 'et_').";

/** Resolves the caller from an `Authorization: Bearer <key>` header, or answers UNAUTHENTICATED. */
export async function authenticate(
  header: string | null,
  db: Database,
  { cacheTtlMs = DEFAULT_CACHE_TTL_MS }: AuthOptions = {},
): Promise<({ ok: true } & Caller) | Failure> {
  if (!header) return fail('UNAUTHENTICATED', 'The request has no API key.', { hint: HINT });
  const key = BEARER.exec(header)?.[1];
  if (!key) return fail('UNAUTHENTICATED', "The Authorization header must have the form 'Bearer <api key>'.", { hint: HINT });

  const cached = verifiedKeys.get(key);
  if (cached && cached.expiresAt > Date.now() && constantTimeEqual(cached.key, key)) {
    return { ok: true, ...cached.caller };
  }

  const keyHash = await hashApiKey(key);
  const [row] = await db
    .select({
      keyId: apiKeys.id,
      keyHash: apiKeys.keyHash,
      projectId: projects.id,
      projectName: projects.name,
      rateLimitPerMinute: projects.rateLimitPerMinute,
    })
    .from(apiKeys)
    .innerJoin(projects, eq(projects.id, apiKeys.projectId))
    .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
    .limit(1);
  if (!row || !constantTimeEqual(row.keyHash, keyHash)) {
    return fail('UNAUTHENTICATED', 'The API key is not valid (unknown or revoked).', { hint: HINT });
  }

  const caller: Caller = {
    project: { id: row.projectId, name: row.projectName },
    keyId: row.keyId,
    rateLimitPerMinute: row.rateLimitPerMinute,
  };
  if (verifiedKeys.size >= MAX_CACHED_KEYS) verifiedKeys.clear();
  verifiedKeys.set(key, { key, caller, expiresAt: Date.now() + cacheTtlMs });
  return { ok: true, ...caller };
}

/** A new random API key: 'et_' and 32 random bytes, base64url. */
export function generateApiKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return KEY_PREFIX + btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The SHA-256 of a key, hex-encoded: what `api_keys.key_hash` stores. */
export async function hashApiKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Compares two strings in time that depends only on their length. */
function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}
