/**
 * The bounds of one code-mode execution, locally and deployed. Each is named in the failure an
 * execution gets for reaching it (docs/code-mode.md lists them, and who enforces each where).
 */
export const CODE_MODE_LIMITS = {
  /** Characters of `code`. */
  codeChars: 100_000,
  /** From the start of the sandbox to the code's answer; pending inner calls get what is left of it again to settle. */
  wallTimeMs: 30_000,
  /**
   * The sandbox's CPU time: deployed, Cloudflare stops the loaded worker at it (Worker Loader
   * `limits.cpuMs`); locally the sandbox host stops the sandbox's process at it (local/sandbox-host.ts).
   */
  cpuMs: 10_000,
  /**
   * The sandbox's memory, in MB: deployed, Cloudflare's limit of every isolate; locally V8's heap
   * limit of the sandbox's process (`--max-old-space-size`), with a bound on the process's resident
   * memory beside it (local/sandbox-host.ts).
   */
  memoryMb: 128,
  /**
   * Loop iterations and function calls the code may run in all (the guard, ./guard.ts): what stops
   * an endless loop or runaway recursion with a failure that keeps the code's logs.
   */
  guardTicks: 10_000_000,
  /**
   * How long the code may run without letting the event loop turn (a synchronous loop, a loop of
   * microtasks, one long builtin call). The guard sees it at its next call; locally the sandbox
   * host also stops a sandbox process that answers no health check for a second beyond it, which
   * stops the builtins no guard reaches.
   */
  blockingMs: 2_000,
  /** How long an execution may wait for a sandbox to start it (locally: for a free sandbox process). */
  sandboxWaitMs: 20_000,
  /** Tool calls one execution may make. */
  innerCalls: 100,
  /** Tool calls of one execution running at once: its share of the global semaphore's slots. */
  concurrentInnerCalls: 3,
  /** Characters of `data.result` in the answer (the answer budget); a larger result is cut, with `meta.truncated`. */
  resultChars: 24_000,
  /** Levels of nesting `data.result` keeps; deeper values are replaced by a marker, with `meta.truncated`. */
  resultDepth: 64,
  /** Characters of the result's JSON the sandbox hands back at most (its start, with its full length): enough to cut it to the budget. */
  resultHandedBackChars: 48_000,
  /**
   * Elements, characters or bytes one builtin call may allocate (new Array(n), fill, repeat, padEnd,
   * join, typed arrays, ArrayBuffer): an allocation that would reach the memory limit in one step
   * is refused with an error the code can read, instead of ending its sandbox.
   */
  allocation: 8_000_000,
  /** Console lines kept, and their characters in all; the rest are counted in `data.logs_dropped`. */
  logLines: 100,
  logChars: 8_000,
} as const;

/** The bounds an execution can be stopped at, as `details.limit` names them, with their values. */
export const STOPPING_LIMITS = {
  wall_time_ms: CODE_MODE_LIMITS.wallTimeMs,
  cpu_ms: CODE_MODE_LIMITS.cpuMs,
  memory_mb: CODE_MODE_LIMITS.memoryMb,
  guard_ticks: CODE_MODE_LIMITS.guardTicks,
  blocking_ms: CODE_MODE_LIMITS.blockingMs,
} as const;

/** A bound an execution can be stopped at (`details.limit`). */
export type StoppingLimit = keyof typeof STOPPING_LIMITS;
