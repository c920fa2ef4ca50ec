/**
 * How long the local stand-ins keep an idle client connection open.
 *
 * Node's HTTP server closes a kept-alive connection after 5 s of idleness. workerd keeps its
 * outgoing connections pooled, and on a machine starved of CPU it can send its next request on a
 * connection the server is closing at that moment: the request fails with "Network connection
 * lost", a transport failure that Neon and Upstash, which keep connections open far longer, do
 * not cause. The stand-ins therefore leave closing an idle connection to the client.
 */
import type { Server } from 'node:http';

/** Idle time after which a stand-in closes a client's connection: longer than any test or dev session waits between calls. */
export const STAND_IN_IDLE_CONNECTION_MS = 10 * 60_000;

/** Keeps the idle connections of `server` open for {@link STAND_IN_IDLE_CONNECTION_MS}; `server.close()` still closes them. */
export function keepIdleConnections<T extends Server>(server: T): T {
  server.keepAliveTimeout = STAND_IN_IDLE_CONNECTION_MS;
  return server;
}
