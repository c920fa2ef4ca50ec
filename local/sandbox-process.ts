/**
 * One sandbox process: `workerd serve` running the sandbox worker (functions/sandbox.ts, bundled
 * by esbuild as wrangler would) on a port of 127.0.0.1 that workerd picks and reports, with V8's
 * heap limit set. The sandbox host (./sandbox-host.ts) runs one execution at a time on it, watches
 * it (health, resident memory, CPU time) and kills it after each execution.
 *
 * Resident memory and CPU time are read from /proc (Linux); elsewhere only V8's heap limit and
 * the health check hold.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { build, stop as stopEsbuild } from 'esbuild';
import { SANDBOX_COMPATIBILITY_DATE, SANDBOX_HEALTH_PATH } from '../shared/codemode/protocol.ts';

/** The workerd binary of the `workerd` package (the one wrangler and Miniflare run). */
const WORKERD: string = createRequire(import.meta.url)('workerd').default;

/** The sandbox worker's entry. */
const SANDBOX_ENTRY = fileURLToPath(new URL('../functions/sandbox.ts', import.meta.url));

/** How long workerd may take to listen. */
const START_TIMEOUT_MS = 30_000;

/** Bytes of a process's last standard error kept, to say why it died. */
const STDERR_TAIL = 4_096;

/** Linux reports a process's CPU time in clock ticks of 1/100 s (USER_HZ). */
const TICKS_PER_SECOND = 100;

/**
 * Bundles the sandbox worker into `folder` and writes the workerd config that serves it there;
 * answers the config's path. `v8Flags` are workerd's V8 flags (the heap limit among them).
 */
export async function writeSandboxConfig(folder: string, v8Flags: readonly string[]): Promise<string> {
  await build({
    entryPoints: [SANDBOX_ENTRY],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2024',
    outfile: join(folder, 'sandbox.js'),
    external: ['cloudflare:*'],
    logLevel: 'silent',
  });
  // esbuild's service process would otherwise stay for the host's whole life.
  await stopEsbuild();
  const config = join(folder, 'sandbox.capnp');
  writeFileSync(
    config,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "sandbox", worker = .sandbox)],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "sandbox")],
  v8Flags = [${v8Flags.map((flag) => JSON.stringify(flag)).join(', ')}],
);
const sandbox :Workerd.Worker = (
  modules = [(name = "sandbox.js", esModule = embed "sandbox.js")],
  compatibilityDate = ${JSON.stringify(SANDBOX_COMPATIBILITY_DATE)},
  bindings = [(name = "LOADER", workerLoader = ())],
);
`,
  );
  return config;
}

/** A running sandbox process. */
export class SandboxProcess {
  readonly pid: number;
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** Settles once the process has exited, however. */
  readonly exited: Promise<void>;
  readonly #child: ChildProcess;
  #stderr = '';

  private constructor(child: ChildProcess, port: number, stderr: string) {
    this.#child = child;
    this.pid = child.pid!;
    this.origin = `http://127.0.0.1:${port}`;
    this.#stderr = stderr;
    this.exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : once(child, 'exit').then(() => undefined);
    child.stderr!.on('data', (chunk: Buffer) => (this.#stderr = (this.#stderr + chunk.toString()).slice(-STDERR_TAIL)));
  }

  /** Starts workerd on `config` and resolves once it listens. */
  static async start(config: string): Promise<SandboxProcess> {
    // Experimental: workerd itself flags Worker Loader bindings as experimental (wrangler passes the same).
    const child = spawn(WORKERD, ['serve', config, '--experimental', '--control-fd=3'], { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const collect = (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-STDERR_TAIL));
    child.stderr!.on('data', collect);
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let control = '';
        (child.stdio[3] as Readable).on('data', (chunk: Buffer) => {
          control += chunk.toString();
          for (const line of control.split('\n')) {
            const message = line.startsWith('{') ? (JSON.parse(line) as { event?: string; port?: number }) : undefined;
            if (message?.event === 'listen' && message.port) resolve(message.port);
          }
        });
        child.once('exit', (code, signal) => reject(new Error(`workerd exited (${code ?? signal}) before it listened:\n${stderr}`)));
        setTimeout(() => reject(new Error(`workerd did not listen within ${START_TIMEOUT_MS} ms:\n${stderr}`)), START_TIMEOUT_MS).unref();
      });
      child.stderr!.off('data', collect);
      return new SandboxProcess(child, port, stderr);
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
  }

  /** Whether the process still runs. */
  get alive(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** What the process last wrote to standard error (why V8 ended it, when it did). */
  get stderr(): string {
    return this.#stderr;
  }

  /** Its resident memory in MB, where /proc tells it. */
  residentMb(): number | undefined {
    const status = readProc(`/proc/${this.pid}/status`);
    const kb = status?.match(/^VmRSS:\s+(\d+)\s+kB/m)?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  }

  /** The CPU time it has used so far (user and system, all threads) in ms, where /proc tells it. */
  cpuMs(): number | undefined {
    const stat = readProc(`/proc/${this.pid}/stat`);
    if (!stat) return undefined;
    // The fields after the command's name (in parentheses, which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  }

  /** Whether it answers its health check within `timeoutMs`. */
  async healthy(timeoutMs: number): Promise<boolean> {
    try {
      const response = await fetch(`${this.origin}${SANDBOX_HEALTH_PATH}`, { signal: AbortSignal.timeout(timeoutMs) });
      await response.arrayBuffer();
      return response.ok;
    } catch {
      return false;
    }
  }

  /** Kills it (it holds nothing worth a graceful stop) and waits for it to be gone. */
  async kill(): Promise<void> {
    if (this.alive) this.#child.kill('SIGKILL');
    await this.exited;
  }
}

function readProc(path: string): string | undefined {
  try {
    return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  } catch {
    return undefined;
  }
}
