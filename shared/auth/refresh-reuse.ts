/**
 * Refresh-token reuse detection (OAuth 2.1 §4.3.1, RFC 9700 §4.14.2). Refresh tokens rotate: each
 * refresh answers a new one. `@cloudflare/workers-oauth-provider` keeps the previous token usable
 * too (so that a client whose answer was lost can retry), and refuses older ones without revoking
 * anything. Here a refresh token that was already exchanged once is a replay, from whoever holds a
 * copy: it revokes the whole grant, its tokens and its row, so that neither the thief nor the
 * client keeps it, and the person approves again.
 *
 * Each exchanged token leaves a record in the provider's KV namespace (under its own prefix,
 * keyed by the token's SHA-256, never the token), kept as long as a refresh token may live.
 */
import type { KVNamespace } from '@cloudflare/workers-types';
import type { OAuthHelpers } from '@cloudflare/workers-oauth-provider';
import type { Database } from '../core/database.ts';
import { revokeGrant } from './grants.ts';
import { hashApiKey } from './keys.ts';

/** The KV prefix of exchanged refresh tokens' records. */
export const RETIRED_REFRESH_PREFIX = 'edge-tools:retired-refresh:';

/** Where a refresh token's grant lives in the provider's KV: `<user id>:<grant id>:<secret>`. */
interface RetiredToken {
  userId: string;
  grantId: string;
}

/** The grant a refresh token belonged to when it was already exchanged once (a replay), else undefined. */
export async function replayedRefreshToken(kv: KVNamespace, refreshToken: string): Promise<RetiredToken | undefined> {
  const record = await kv.get(RETIRED_REFRESH_PREFIX + (await hashApiKey(refreshToken)));
  return record ? (JSON.parse(record) as RetiredToken) : undefined;
}

/** Records that `refreshToken` was exchanged: any later use of it is a replay. */
export async function retireRefreshToken(kv: KVNamespace, refreshToken: string, ttlSeconds: number): Promise<void> {
  const [userId, grantId] = refreshToken.split(':');
  if (!userId || !grantId) return;
  const record: RetiredToken = { userId, grantId };
  await kv.put(RETIRED_REFRESH_PREFIX + (await hashApiKey(refreshToken)), JSON.stringify(record), { expirationTtl: ttlSeconds });
}

/**
 * Revokes the grant of a replayed refresh token: its row in the database (what `GET /grants` and
 * every use of its tokens check) and the provider's grant with all its tokens in KV.
 */
export async function revokeReplayedGrant(helpers: OAuthHelpers, db: Database, { userId, grantId }: RetiredToken): Promise<void> {
  let cursor: string | undefined;
  do {
    const page = await helpers.listUserGrants(userId, { cursor });
    const grant = page.items.find((item) => item.id === grantId);
    if (grant) {
      const recorded = (grant.metadata as { grantId?: string } | undefined)?.grantId;
      if (recorded) await revokeGrant(db, recorded, { projectId: userId });
      break;
    }
    cursor = page.cursor;
  } while (cursor);
  await helpers.revokeGrant(grantId, userId);
}
