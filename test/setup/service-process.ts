/**
 * Runs a stand-in in a Node process of its own, so that it answers on its own event loop as the
 * real service would. In Vitest's main process the stand-ins shared one event loop with Vite's
 * transforms, PGlite's synchronous queries and js-tiktoken's table build; with two test files at
 * once that loop stalled for 2 to 8 s at a time, and the semaphore's Redis requests, waiting behind
 * it, timed out as "unavailable".
 *
 * The child is `node test/setup/service-process.ts <name>`: it starts the service, writes one line
 * of JSON (what the parent needs: URLs, tokens, ports) and serves until SIGTERM, or until its
 * stdin closes (the parent died), then stops what it started.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startNeonStandIn } from '../../local/neon-http.ts';
import { injectedRoundTrips } from '../../local/round-trip.ts';
import { startRedisServer, startUpstashStandIn } from '../../local/upstash-rest.ts';
import { startTokenCounter } from './token-counter.ts';

/** A service the child runs: what it tells the parent, and how it stops. */
type Running<Info> = { info: Info; close(): Promise<void> };

/** The services a child process can run, by name. */
const SERVICES = {
  /** The Neon stand-in (PGlite, in memory), with the round trip LOCAL_NEON_RTT_MS asks for (local/round-trip.ts). */
  neon: async () => {
    const neon = await startNeonStandIn({ roundTrip: injectedRoundTrips().neon });
    return { info: { connectionString: neon.connectionString, port: neon.port }, close: neon.close };
  },
  /** redis-server behind the Upstash REST stand-in, with the round trip LOCAL_UPSTASH_RTT_MS asks for; `null` when redis-server is not installed. */
  upstash: async () => {
    const redis = await startRedisServer();
    if (!redis) return { info: null, close: async () => {} };
    const upstash = await startUpstashStandIn({ redisPort: redis.port, token: 'test-token', roundTrip: injectedRoundTrips().upstash });
    return {
      info: { url: upstash.url, token: upstash.token },
      close: async () => {
        await upstash.close();
        await redis.stop();
      },
    };
  },
  /** The o200k_base token counter (test/setup/token-counter.ts). */
  tokens: async () => {
    const counter = await startTokenCounter();
    return { info: { url: counter.url }, close: counter.close };
  },
} satisfies Record<string, () => Promise<Running<unknown>>>;

type ServiceName = keyof typeof SERVICES;
type InfoOf<Name extends ServiceName> = Awaited<ReturnType<(typeof SERVICES)[Name]>>['info'];

/** How long a child may take to start its service. */
const START_TIMEOUT_MS = 120_000;
/** How long a child may take to stop after SIGTERM before it gets SIGKILL. */
const STOP_TIMEOUT_MS = 10_000;

/** A service running in a child process. */
export interface ServiceProcess<Info> {
  info: Info;
  pid: number;
  stop(): Promise<void>;
}

/** Starts the service `name` in a child process and resolves once it serves. */
export async function startServiceProcess<Name extends ServiceName>(name: Name): Promise<ServiceProcess<InfoOf<Name>>> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), name], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.off('exit', killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };
  const firstLine = new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      lines.close();
      resolve(line);
    });
    void exited.then(() => reject(new Error(`the ${name} service process exited before it served (exit ${child.exitCode})`)));
    setTimeout(
      () => reject(new Error(`the ${name} service process did not serve within ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    ).unref();
  });
  try {
    return { info: JSON.parse(await firstLine) as InfoOf<Name>, pid: child.pid!, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The child's side: runs the service named on the command line. */
async function serve(name: string): Promise<void> {
  if (!Object.hasOwn(SERVICES, name)) throw new Error(`unknown service '${name}'; one of ${Object.keys(SERVICES).join(', ')}`);
  const running: Running<unknown> = await SERVICES[name as ServiceName]();
  let stopping: Promise<void> | undefined;
  const shutDown = () =>
    (stopping ??= running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    ));
  process.once('SIGTERM', shutDown);
  process.stdin.once('end', shutDown);
  process.stdin.resume();
  process.stdout.write(`${JSON.stringify(running.info)}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  serve(process.argv[2] ?? '').catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
