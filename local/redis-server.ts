/**
 * A throwaway redis-server for development and tests (never bundled into a Worker), and the ioredis
 * connection the Upstash stand-in and the tests open to it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { freePort } from './wrangler-dev.ts';

// ioredis is CommonJS: vitest's global setup hands its named ESM imports over as undefined, so it is
// loaded with Node's own require, which every caller of this module (Node, never workerd) has.
const ioredis: typeof import('ioredis') = createRequire(import.meta.url)('ioredis');

/** ioredis's error reply class, for `instanceof` checks. */
export const RedisReplyError = ioredis.ReplyError;

/** How long redis-server may take to answer its first PING. */
const REDIS_START_TIMEOUT_MS = 5_000;
/** How soon a dropped connection to redis-server is tried again. */
const RECONNECT_DELAY_MS = 100;
/** How long redis-server may take to exit after SIGTERM before it gets SIGKILL. */
const REDIS_STOP_TIMEOUT_MS = 3_000;

// ---------------------------------------------------------------------------------------------
// redis-server

/** A throwaway redis-server started by {@link startRedisServer}. */
export interface RedisServer {
  port: number;
  url: string;
  /** Its process id, for tests that freeze (SIGSTOP) or kill it. */
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts a throwaway redis-server on 127.0.0.1 with no persistence, on `options.port` or a random
 * free port. Resolves with null (and does not throw) when no `redis-server` binary is on PATH.
 */
export async function startRedisServer(options: { port?: number } = {}): Promise<RedisServer | null> {
  const binary = await findOnPath('redis-server');
  if (!binary) return null;
  // A random port can be taken between probing and binding: try a few.
  for (let attempt = 0; ; attempt++) {
    const port = options.port ?? (await freePort());
    const child = spawn(
      binary,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        tmpdir(),
        '--daemonize',
        'no',
        '--loglevel',
        'warning',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Never leave an orphan redis-server behind when the test process exits without stopping it.
    const killOnExit = () => child.kill('SIGKILL');
    process.once('exit', killOnExit);
    const stop = async () => {
      process.off('exit', killOnExit);
      await stopChild(child);
    };
    if (await waitForPing(port, child)) {
      return { port, url: `redis://127.0.0.1:${port}`, pid: child.pid!, stop };
    }
    await stop();
    if (options.port !== undefined || attempt >= 2) {
      throw new Error(`redis-server did not start on port ${port}: ${stderr.trim() || 'no output'}`);
    }
  }
}

async function findOnPath(name: string): Promise<string | null> {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

async function waitForPing(port: number, child: ChildProcess): Promise<boolean> {
  const deadline = Date.now() + REDIS_START_TIMEOUT_MS;
  while (Date.now() < deadline && child.exitCode === null) {
    const connection = connectRedis(port);
    try {
      await connection.connect();
      if ((await connection.ping()) === 'PONG') return true;
    } catch {
      // not listening yet
    } finally {
      connection.disconnect();
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), REDIS_STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
    child.kill('SIGCONT'); // a frozen (SIGSTOPped) server handles SIGTERM only once it runs again
  });
}

// ---------------------------------------------------------------------------------------------
// ioredis, set up to pass replies through: no offline queue (a command sent while redis-server is
// down fails at once, as a REST call would), no command re-sent after a reconnect (it may have run),
// and no reply transformed (see {@link RedisLink.send}).

/** A connection to the redis-server on `port`, reconnecting in the background when it drops. */
export function connectRedis(port: number): Redis {
  const redis = new ioredis.Redis({
    port,
    host: '127.0.0.1',
    // Upstash answers in RESP2's shapes (flat arrays, no maps); ioredis 6 defaults to RESP3.
    protocol: 2,
    lazyConnect: true,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => RECONNECT_DELAY_MS,
  });
  redis.on('error', () => undefined); // a refused or dropped connection fails the commands on it
  return redis;
}
