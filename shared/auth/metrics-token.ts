/**
 * The deployment's Prometheus scrape token (`METRICS_TOKEN`): a credential of its own, which reads
 * every project's counters and nothing else (`GET /metrics?format=prometheus`). It arrives as
 * every credential does (shared/auth/bearer.ts) and is compared in constant time.
 */
import { bearerToken } from './bearer.ts';
import { constantTimeEqual, hashApiKey } from './keys.ts';

/** Whether an `Authorization` header carries `expected` (the configured `METRICS_TOKEN`; never when unset). */
export async function isMetricsToken(authorization: string | null | undefined, expected: string | undefined): Promise<boolean> {
  const token = expected?.trim();
  const sent = bearerToken(authorization);
  if (!token || !sent) return false;
  // Digests have equal lengths, so comparing them reveals nothing about the token's length either.
  const [sentDigest, expectedDigest] = await Promise.all([hashApiKey(sent), hashApiKey(token)]);
  return constantTimeEqual(sentDigest, expectedDigest);
}
