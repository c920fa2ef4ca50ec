/**
 * The worker as a user runs it, for the tests and benches that need it whole: `wrangler dev` on a
 * free port of 127.0.0.1, offline, in its own process group so that stopping it stops workerd too,
 * with code mode's sandbox host beside it unless the stack never runs code (local/sandbox-host.ts,
 * `SANDBOX_URL`), so that code mode runs isolated there as it does everywhere. (`npm run dev` itself, with its stand-ins and
 * seed, is local/dev.ts.)
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSandboxHost } from './sandbox-host.ts';
import { wranglerEnv } from './wrangler-env.ts';

/** Options of {@link startWranglerDev}. */
export interface WranglerDevOptions {
  /** The checkout to serve, with its own node_modules (default: this one). */
  root?: string;
  /** The worker's wrangler configuration, if not the checkout's wrangler.toml (`--config`; a bench's own worker). */
  config?: string;
  /** Variables of the worker (`--var NAME:value`), e.g. DATABASE_URL. */
  vars?: Record<string, string>;
  /** Where wrangler keeps its local state (`--persist-to`); default: its own `.wrangler/state`. */
  persistTo?: string;
  /** How long wrangler may take to say it is ready. */
  startTimeoutMs?: number;
  /** Port of workerd's DevTools inspector (`--inspector-port`), for heap snapshots; wrangler's default when unset. */
  inspectorPort?: number;
  /** workerd's V8 flags; default: those of every local workerd (local/wrangler-env.ts, localV8Flags). */
  v8Flags?: string;
  /**
   * Whether code mode's sandbox host is started beside it (default true). `false` for a stack that
   * never runs code: no sandbox processes, and `POST /code` answers CONFIG_ERROR, as a deployment
   * without the SANDBOX binding does.
   */
  sandbox?: boolean;
}

/** The defaults of {@link WranglerDevOptions}. */
export const WRANGLER_DEV_DEFAULTS = {
  root: fileURLToPath(new URL('..', import.meta.url)),
  startTimeoutMs: 120_000,
  sandbox: true,
} as const;

/** A running `wrangler dev`. */
export interface WranglerDev {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** wrangler's pid, which is also its process group's id (workerd runs in it). */
  pid: number;
  /** Stops wrangler and what it started (its process group), and the sandbox host; nothing when all of it has stopped already. */
  stop(): void;
}

/** Starts `wrangler dev` and resolves once it serves; rejects with its output when it exits or times out. */
export async function startWranglerDev(options: WranglerDevOptions = {}): Promise<WranglerDev> {
  const { root, config, vars = {}, persistTo, startTimeoutMs, inspectorPort, v8Flags, sandbox } = { ...WRANGLER_DEV_DEFAULTS, ...options };
  const host = sandbox ? await startSandboxHost() : undefined;
  const port = await freePort();
  const args = ['dev', '--ip', '127.0.0.1', '--port', String(port), '--show-interactive-dev-session=false'];
  if (config) args.push('--config', config);
  for (const [name, value] of Object.entries({ ...(host && { SANDBOX_URL: host.url }), ...vars })) args.push('--var', `${name}:${value}`);
  if (persistTo) args.push('--persist-to', persistTo);
  if (inspectorPort) args.push('--inspector-port', String(inspectorPort));
  const wrangler = spawn(join(root, 'node_modules/.bin/wrangler'), args, {
    cwd: root,
    env: wranglerEnv(root, { offline: true, v8Flags }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  // The whole group, even when wrangler itself has exited: workerd and esbuild may outlive it.
  const stop = () => {
    host?.stop();
    if (!wrangler.pid) return;
    try {
      process.kill(-wrangler.pid, 'SIGTERM');
    } catch {
      // ESRCH: nothing of the group is left to stop.
    }
  };
  let output = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`wrangler dev did not start within ${startTimeoutMs / 1000} s:\n${output.slice(-2_000)}`)),
        startTimeoutMs,
      );
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready on')) {
          clearTimeout(timer);
          resolve();
        }
      };
      wrangler.stdout!.on('data', onData);
      wrangler.stderr!.on('data', onData);
      wrangler.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`wrangler dev exited (${code}):\n${output.slice(-2_000)}`));
      });
    });
  } catch (error) {
    stop();
    throw error;
  }
  return { url: `http://127.0.0.1:${port}`, pid: wrangler.pid!, stop };
}

/** A free port on 127.0.0.1: asked of the system, then released for the server that takes it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
