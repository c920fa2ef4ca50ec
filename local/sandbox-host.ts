/**
 * The sandbox host: code mode's sandbox on this machine. Locally workerd enforces neither CPU nor
 * memory limits on a worker it loads, and a fatal error of V8 (out of memory, an allocation too
 * large) ends its whole process. So the code an agent sends never runs in the gateway's workerd:
 * the gateway opens a WebSocket here (`SANDBOX_URL`), and this host relays it to a workerd process
 * of its own that runs the sandbox worker (./sandbox-process.ts), one execution per process:
 *
 * - a small pool of processes is kept warm; an execution takes a free one, or waits (bounded) for one;
 * - each process runs with V8's heap limit at the deployed memory limit (128 MB per isolate), so
 *   V8's own out-of-memory ends that process only;
 * - while an execution runs, its process is watched: no answer to its health check for
 *   `stallMs` (code that keeps its event loop from turning, a long builtin call), resident memory
 *   over `residentMb`, or CPU time over the deployed CPU limit, and it is killed; the gateway is
 *   told why by the socket's close code (shared/codemode/protocol.ts, SANDBOX_CLOSE_CODES);
 * - a process that ran an execution, however it ended, is killed and replaced: nothing of one
 *   execution is left for the next.
 *
 * What several executions share: this host's Node process (relaying text only) and the machine's
 * CPU cores. What they do not: an isolate, a heap, a workerd process.
 *
 * `npm run dev`, the tests' global setup and local/wrangler-dev.ts start it ({@link startSandboxHost}),
 * each in a process of its own: `node local/sandbox-host.ts` prints one line of JSON (its URL)
 * and serves until SIGTERM or until its standard input closes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Duplex } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { CODE_MODE_LIMITS } from '../shared/codemode/limits.ts';
import { SANDBOX_CLOSE_CODES, SANDBOX_EXECUTE_PATH } from '../shared/codemode/protocol.ts';
import { SandboxPool, type Lease } from './sandbox-pool.ts';
import { writeSandboxConfig, type SandboxProcess } from './sandbox-process.ts';
import { LOCAL_V8_FLAGS } from './wrangler-env.ts';

/** Options of the sandbox host. */
export interface SandboxHostOptions {
  /** Its port on 127.0.0.1 (0: any free one). */
  port?: number;
  /** Sandbox processes at most, each running one execution at a time; executions beyond wait. */
  processes?: number;
  /** Idle processes kept ready. */
  warm?: number;
  /** V8's heap limit of each process, in MB (`--max-old-space-size`). */
  heapMb?: number;
  /** Resident memory a process may reach while it runs an execution, in MB. */
  residentMb?: number;
  /** How long a running process may leave its health check unanswered. */
  stallMs?: number;
  /** CPU time one execution's process may use, in ms. */
  cpuMs?: number;
  /** How long an execution may wait for a free process. */
  waitMs?: number;
}

/** The defaults of {@link SandboxHostOptions}: the deployed limits where there is one (shared/codemode/limits.ts). */
export const SANDBOX_HOST_DEFAULTS = {
  port: 0,
  processes: 4,
  warm: 2,
  heapMb: CODE_MODE_LIMITS.memoryMb,
  residentMb: 384,
  stallMs: CODE_MODE_LIMITS.blockingMs + 1_000,
  cpuMs: CODE_MODE_LIMITS.cpuMs,
  waitMs: CODE_MODE_LIMITS.sandboxWaitMs,
} as const;

/** How often a running process is looked at. */
const WATCH_EVERY_MS = 200;

/** Characters of one relayed frame at most (shared/codemode/protocol.ts keeps frames under 1 MiB of UTF-8). */
const MAX_FRAME_BYTES = 1024 * 1024;

/** A running sandbox host. */
export interface SandboxHost {
  /** `http://127.0.0.1:<port>`: what the gateway's `SANDBOX_URL` is. */
  url: string;
  close(): Promise<void>;
}

/** Serves the sandbox host in this process. */
export async function serveSandboxHost(options: SandboxHostOptions = {}): Promise<SandboxHost> {
  const settings: Required<SandboxHostOptions> = { ...SANDBOX_HOST_DEFAULTS, ...options };
  const folder = mkdtempSync(join(tmpdir(), 'edge-tools-sandbox-'));
  const config = await writeSandboxConfig(folder, [`--max-old-space-size=${settings.heapMb}`, LOCAL_V8_FLAGS]);
  const pool = new SandboxPool(config, settings);
  await pool.ready();
  const sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  const server = createServer((request, response) => {
    response.setHeader('content-type', 'application/json');
    if (request.url === '/health') return response.end(JSON.stringify(pool.status()));
    response.statusCode = 404;
    response.end(JSON.stringify({ error: `The sandbox host serves ${SANDBOX_EXECUTE_PATH} (a WebSocket) and /health.` }));
  });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (new URL(request.url ?? '/', 'http://host').pathname !== SANDBOX_EXECUTE_PATH) return socket.destroy();
    sockets.handleUpgrade(request, socket, head, (gateway) => void new Relay(gateway, settings).start(pool));
  });
  await new Promise<void>((resolve) => server.listen(settings.port, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      for (const client of sockets.clients) client.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/**
 * One execution, relayed between the gateway's socket and a sandbox process; it ends the way the
 * process ended: the sandbox's own close when it answered, else a close code naming the bound the
 * process reached (or that it died, or that none was free). The process is released (killed and
 * replaced) however it ends.
 */
class Relay {
  readonly #gateway: WebSocket;
  readonly #settings: Required<SandboxHostOptions>;
  /** What the gateway sent before the sandbox's socket opened. */
  readonly #early: string[] = [];
  #upstream?: WebSocket;
  #lease?: Lease;
  #watch?: ReturnType<typeof setInterval>;
  #finished = false;

  constructor(gateway: WebSocket, settings: Required<SandboxHostOptions>) {
    this.#gateway = gateway;
    this.#settings = settings;
    gateway.on('message', (data: RawData) => {
      const text = data.toString();
      if (this.#upstream?.readyState === WebSocket.OPEN) this.#upstream.send(text);
      else this.#early.push(text);
    });
    gateway.on('close', () => this.finish(1000, 'the gateway closed'));
    gateway.on('error', () => this.finish(1011, 'the gateway connection broke'));
  }

  /** Waits for a free process (bounded), then relays to it and watches it. */
  async start(pool: SandboxPool): Promise<void> {
    const lease = await pool.acquire(this.#settings.waitMs);
    if (!lease) return this.finish(SANDBOX_CLOSE_CODES.busy, `no sandbox process was free within ${this.#settings.waitMs} ms`);
    this.#lease = lease;
    if (this.#finished) return void lease.release();
    const { sandbox } = lease;
    const died = () => this.finish(SANDBOX_CLOSE_CODES.memory, `the sandbox's process ended (${whyEnded(sandbox.stderr)})`);
    const upstream = new WebSocket(`${sandbox.origin.replace('http', 'ws')}${SANDBOX_EXECUTE_PATH}`, { maxPayload: MAX_FRAME_BYTES });
    this.#upstream = upstream;
    upstream.on('open', () => {
      for (const text of this.#early.splice(0)) upstream.send(text);
    });
    upstream.on('message', (data: RawData) => this.#gateway.send(data.toString()));
    upstream.on('close', (code: number) => {
      if (code === 1000) return this.finish(1000, 'done');
      // The sandbox dropped the connection: its process died, or is about to (V8 writes why first).
      void Promise.race([sandbox.exited, new Promise((resolve) => setTimeout(resolve, 500))]).then(() =>
        sandbox.alive ? this.finish(1011, `the sandbox closed the connection (code ${code})`) : died(),
      );
    });
    upstream.on('error', () => undefined);
    void sandbox.exited.then(died);
    this.#watch = watchSandbox(sandbox, this.#settings, (code, reason) => this.finish(code, reason));
  }

  /** Ends the execution: tells the gateway how (`code`, `reason`), drops the sandbox's socket, releases the process. */
  finish(code: number, reason: string): void {
    if (this.#finished) return;
    this.#finished = true;
    clearInterval(this.#watch);
    closeQuietly(this.#gateway, code, reason);
    this.#upstream?.terminate();
    void this.#lease?.release();
  }
}

/** Looks at a running process every few hundred ms, and finishes its execution when it passes a bound. */
function watchSandbox(
  sandbox: SandboxProcess,
  settings: Required<SandboxHostOptions>,
  finish: (code: number, reason: string) => void,
): ReturnType<typeof setInterval> {
  const startedCpu = sandbox.cpuMs() ?? 0;
  let answeredAt = Date.now();
  let asking = false;
  return setInterval(() => {
    const resident = sandbox.residentMb();
    if (resident !== undefined && resident > settings.residentMb)
      return finish(
        SANDBOX_CLOSE_CODES.memory,
        `its resident memory reached ${Math.round(resident)} MB, over the ${settings.residentMb} MB bound`,
      );
    const cpu = (sandbox.cpuMs() ?? 0) - startedCpu;
    if (cpu > settings.cpuMs) return finish(SANDBOX_CLOSE_CODES.cpu, `it used ${Math.round(cpu)} ms of CPU time`);
    if (Date.now() - answeredAt > settings.stallMs)
      return finish(SANDBOX_CLOSE_CODES.blocking, `it answered no health check for ${settings.stallMs} ms`);
    if (asking) return;
    asking = true;
    void sandbox.healthy(settings.stallMs).then((healthy) => {
      asking = false;
      if (healthy) answeredAt = Date.now();
    });
  }, WATCH_EVERY_MS);
}

/** The reason V8 or workerd gave for ending a process, from its last standard error. */
function whyEnded(stderr: string): string {
  if (/heap out of memory|Reached heap limit/i.test(stderr)) return 'out of memory: V8 reached its heap limit';
  if (/invalid (array|string|table) (length|size)|Invalid size|fatal/i.test(stderr))
    return 'a fatal error of V8, such as an allocation too large';
  return 'it died';
}

function closeQuietly(socket: WebSocket, code: number, reason: string): void {
  if (socket.readyState === WebSocket.CLOSED || socket.readyState === WebSocket.CLOSING) return;
  socket.close(code, Buffer.from(reason).subarray(0, 120).toString());
}

/** A sandbox host running in a process of its own. */
export interface SandboxHostProcess {
  url: string;
  /** Its pid, which is also its process group's id (its workerd processes run in it). */
  pid: number;
  /** Stops it and its workerd processes. */
  stop(): void;
}

/** How long the host's process may take to serve. */
const HOST_START_TIMEOUT_MS = 60_000;

/** Starts the sandbox host in a process (and process group) of its own; resolves once it serves. */
export async function startSandboxHost(options: SandboxHostOptions = {}): Promise<SandboxHostProcess> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), JSON.stringify(options)], {
    stdio: ['pipe', 'pipe', 'inherit'],
    detached: true,
  });
  const stop = () => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // ESRCH: nothing of the group is left.
    }
  };
  process.once('exit', stop);
  try {
    const line = await new Promise<string>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      lines.once('line', (first) => {
        lines.close();
        resolve(first);
      });
      child.once('exit', (code) => reject(new Error(`the sandbox host exited (${code}) before it served`)));
      setTimeout(
        () => reject(new Error(`the sandbox host did not serve within ${HOST_START_TIMEOUT_MS} ms`)),
        HOST_START_TIMEOUT_MS,
      ).unref();
    });
    const { url } = JSON.parse(line) as { url: string };
    return {
      url,
      pid: child.pid!,
      stop: () => {
        process.off('exit', stop);
        stop();
      },
    };
  } catch (error) {
    stop();
    throw error;
  }
}

/** `node local/sandbox-host.ts [options as JSON]`: serves until SIGTERM, or until standard input closes (the parent died). */
async function main(): Promise<void> {
  const host = await serveSandboxHost(JSON.parse(process.argv[2] ?? '{}') as SandboxHostOptions);
  let stopping: Promise<void> | undefined;
  const shutDown = () =>
    (stopping ??= host.close().then(
      () => process.exit(0),
      () => process.exit(1),
    ));
  process.once('SIGTERM', shutDown);
  process.once('SIGINT', shutDown);
  process.stdin.once('end', shutDown);
  process.stdin.resume();
  process.stdout.write(`${JSON.stringify({ url: host.url })}\n`);
}

if (import.meta.main) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
