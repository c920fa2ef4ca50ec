/**
 * What the semaphore tests share: a redis-server of the calling file's own with the Upstash
 * stand-in in front of it (the semaphore's client, `redis`) and a direct TCP view of it (`direct`,
 * for samplers and leak checks), the short waits the suites run with, and helpers to start and
 * check acquires. Each test file of the node project imports this module afresh (vitest isolates
 * the files), so each has its own server, clients and key prefixes.
 */
import { Redis } from '@upstash/redis';
import { Redis as DirectRedis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { startRedisServer, startUpstashStandIn, type RedisServer } from '../../local/upstash-rest.ts';
import { SEMAPHORE_REDIS_RETRY, type Acquired, type AcquireOptions, type Semaphore } from '../../shared/concurrency/semaphore.ts';

/** The stand-in's token. */
export const TOKEN = 'semaphore-test';

/**
 * Short waits keep the suite fast; production uses SEMAPHORE_DEFAULTS. Everything that would end a
 * slot, a place in the queue or a request on its own (leases, the time a woken waiter has to claim
 * its slot, the liveness grace, request and leave timeouts) is a ceiling as long as a test may run:
 * a process starved of CPU on a busy machine, where a request through the stand-in can take
 * seconds, keeps its slots and its place, and a release resolves once Redis ran it. Tests that need
 * a lease or a liveness deadline to run out set their own. A waiter blocks for a second between
 * polls (a hand-over wakes it at once): 90 waiters polling five times a second kept the stand-in,
 * which runs in the test's own process, too busy to answer on a loaded machine.
 */
export const FAST = {
  leaseMs: 60_000,
  firstLeaseMs: 60_000,
  blockMs: 1_000,
  livenessGraceMs: 60_000,
  pollMaxMs: 200,
  requestTimeoutMs: 20_000,
  leaveWaitMs: 20_000,
};
/** A ceiling for what a test waits for, not a measure. */
export const WAIT = { timeout: 20_000, interval: 5 };

/** The semaphore's client: @upstash/redis -> stand-in -> redis-server (set before the file's tests run). */
export let redis: Redis;
/** An independent view of Redis (a direct TCP client) for samplers and leak checks (set before the file's tests run). */
export let direct: DirectRedis;

/**
 * Starts the calling file's redis-server, and registers the hooks that start the stand-in and the
 * direct client before its tests and stop all three after. Resolves with null, warning loudly, when
 * redis-server is not installed: the file's Redis suites are then skipped.
 */
export async function useRedis(): Promise<RedisServer | null> {
  const redisServer = await startRedisServer();
  if (!redisServer) {
    console.warn("\n*** redis-server is not installed: SKIPPING this file's RedisSemaphore tests ***\n");
  }
  let standIn: Awaited<ReturnType<typeof startUpstashStandIn>> | undefined;
  beforeAll(async () => {
    if (!redisServer) return;
    standIn = await startUpstashStandIn({ redisPort: redisServer.port, token: TOKEN });
    redis = upstashClient(standIn.url);
    direct = new DirectRedis({ host: '127.0.0.1', port: redisServer.port, lazyConnect: true });
    await direct.connect();
  });
  afterAll(async () => {
    direct?.disconnect();
    await standIn?.close();
    await redisServer?.stop();
  });
  return redisServer;
}

/** The semaphore's kind of client for the stand-in at `url`. */
export function upstashClient(url: string): Redis {
  return new Redis({ url, token: TOKEN, retry: SEMAPHORE_REDIS_RETRY, enableTelemetry: false });
}

let prefixes = 0;
/** A key prefix no other semaphore of the file uses. */
export const nextPrefix = () => `test-semaphore-${++prefixes}`;
/** The sorted set of a prefix's holders. */
export const holdersKey = (prefix: string) => `{${prefix}}:holders`;
/** The sorted set of a prefix's tombstones (calls that left). */
export const goneKey = (prefix: string) => `{${prefix}}:gone`;
/** Every key the semaphore under `prefix` left in Redis. */
export const keysOf = (prefix: string) => direct.keys(`{${prefix}}*`);

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts an acquire and exposes when it queued (its position) and how it ended. */
export function start(semaphore: Semaphore, callId: string, options: AcquireOptions = {}) {
  let onQueued!: (position: number) => void;
  const queued = new Promise<number>((resolve) => (onQueued = resolve));
  const result = semaphore.acquire(callId, { ...options, onQueued });
  return { queued, result };
}

/** Acquires a slot, failing the test if it is refused. */
export async function acquireOk(semaphore: Semaphore, callId: string): Promise<Acquired> {
  const result = await semaphore.acquire(callId);
  if (!result.ok) throw new Error(`expected a slot for ${callId}: ${result.detail}`);
  return result;
}
