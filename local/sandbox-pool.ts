/**
 * The sandbox host's processes (./sandbox-host.ts): `warm` of them kept idle and ready, at most
 * `processes` in all. An execution leases one, waiting (bounded) in line when none is free; its
 * release kills the process, whatever state the code left it in, and another is started.
 */
import { SandboxProcess } from './sandbox-process.ts';

/** One process, leased to one execution. */
export interface Lease {
  sandbox: SandboxProcess;
  /** Kills the process and starts its successor. */
  release(): Promise<void>;
}

/** How long to wait before starting a process again after a start failed. */
const RETRY_START_MS = 1_000;

/** Processes for one execution each. */
export class SandboxPool {
  readonly #config: string;
  readonly #processes: number;
  readonly #warm: number;
  readonly #idle: SandboxProcess[] = [];
  readonly #running = new Set<SandboxProcess>();
  readonly #waiting: ((sandbox: SandboxProcess) => void)[] = [];
  #starting = 0;
  #closed = false;
  #retry: ReturnType<typeof setTimeout> | undefined;

  /** A pool of the processes `config` (a workerd config) runs. */
  constructor(config: string, { processes, warm }: { processes: number; warm: number }) {
    this.#config = config;
    this.#processes = processes;
    this.#warm = Math.min(warm, processes);
  }

  /** Starts the first process and resolves once it serves (rejects when workerd cannot start it); the others follow. */
  async ready(): Promise<void> {
    this.#starting++;
    let first: SandboxProcess;
    try {
      first = await SandboxProcess.start(this.#config);
    } finally {
      this.#starting--;
    }
    this.#adopt(first);
    this.#fill();
  }

  /** A free process, leased; undefined when none became free within `waitMs`. */
  acquire(waitMs: number): Promise<Lease | undefined> {
    for (let idle = this.#idle.shift(); idle; idle = this.#idle.shift()) if (idle.alive) return Promise.resolve(this.#lease(idle));
    return new Promise((resolve) => {
      const waiter = (sandbox: SandboxProcess) => {
        clearTimeout(timer);
        resolve(this.#lease(sandbox));
      };
      const timer = setTimeout(() => {
        this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
        resolve(undefined);
      }, waitMs);
      this.#waiting.push(waiter);
      this.#fill();
    });
  }

  /** What runs now: each process's pid and resident memory, and the executions waiting. */
  status() {
    const describe = (sandbox: SandboxProcess, running: boolean) => ({ pid: sandbox.pid, running, resident_mb: sandbox.residentMb() });
    return {
      processes: [
        ...this.#idle.map((sandbox) => describe(sandbox, false)),
        ...[...this.#running].map((sandbox) => describe(sandbox, true)),
      ],
      starting: this.#starting,
      waiting: this.#waiting.length,
    };
  }

  /** Kills every process; nothing starts after. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    await Promise.all([...this.#idle.splice(0), ...this.#running].map((sandbox) => sandbox.kill()));
  }

  #lease(sandbox: SandboxProcess): Lease {
    this.#running.add(sandbox);
    let released: Promise<void> | undefined;
    return {
      sandbox,
      release: () =>
        (released ??= sandbox.kill().then(() => {
          this.#running.delete(sandbox);
          this.#fill();
        })),
    };
  }

  /** Starts processes until `warm` are idle or starting, and one for each execution waiting, within `processes`. */
  #fill(): void {
    const wanted = () => Math.max(this.#warm - this.#idle.length, this.#waiting.length) - this.#starting;
    while (!this.#closed && wanted() > 0 && this.#idle.length + this.#running.size + this.#starting < this.#processes) {
      this.#starting++;
      SandboxProcess.start(this.#config).then(
        (sandbox) => {
          this.#starting--;
          this.#adopt(sandbox);
        },
        (error: unknown) => {
          this.#starting--;
          console.error(`The sandbox host could not start a sandbox process: ${(error as Error).message}`);
          clearTimeout(this.#retry);
          this.#retry = setTimeout(() => this.#fill(), RETRY_START_MS);
        },
      );
    }
  }

  /** Hands a new process to the first execution waiting, or keeps it idle; one that dies idle is replaced. */
  #adopt(sandbox: SandboxProcess): void {
    if (this.#closed) return void sandbox.kill();
    void sandbox.exited.then(() => {
      const at = this.#idle.indexOf(sandbox);
      if (at === -1) return;
      this.#idle.splice(at, 1);
      this.#fill();
    });
    const waiter = this.#waiting.shift();
    if (waiter) waiter(sandbox);
    else this.#idle.push(sandbox);
  }
}
