/**
 * This machine's names: what a developer's local stack is addressed by (the local database
 * stand-in, `wrangler dev`, an OAuth issuer on http).
 */

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Whether `hostname` is this machine (localhost, 127.0.0.1, ::1). */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname);
}
