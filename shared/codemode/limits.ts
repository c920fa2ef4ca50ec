/**
 * The bounds of one code-mode execution, locally and deployed. Each is named in the failure an
 * execution gets for reaching it (docs/code-mode.md lists them).
 */
export const CODE_MODE_LIMITS = {
  /** Characters of `code`. */
  codeChars: 100_000,
  /** From the start of the sandbox to the code's answer; pending inner calls get what is left of it again to settle. */
  wallTimeMs: 30_000,
  /** The sandbox's CPU time, enforced by Cloudflare when deployed (Worker Loader `limits.cpuMs`); workerd does not enforce it locally. */
  cpuMs: 10_000,
  /**
   * Loop iterations and function calls the code may run in all (the guard, ./guard.ts): what stops
   * an endless loop or runaway recursion wherever the CPU limit is not enforced, and deployed too.
   */
  guardTicks: 10_000_000,
  /**
   * How long the code may run without letting the event loop turn (a synchronous loop, or a loop of
   * microtasks): locally such code holds up every request of the dev server, so the guard stops it
   * (where the clock moves during synchronous code, as it does under wrangler dev).
   */
  blockingMs: 2_000,
  /** Tool calls one execution may make. */
  innerCalls: 100,
  /** Tool calls of one execution running at once: its share of the global semaphore's slots. */
  concurrentInnerCalls: 3,
  /** Characters of `data.result` in the answer (the answer budget); a larger result is cut, with `meta.truncated`. */
  resultChars: 24_000,
  /** Characters of the largest result the sandbox hands back to be cut; a larger one is refused whole. */
  transferChars: 8_000_000,
  /**
   * Elements, characters or bytes one builtin call may allocate (new Array(n), fill, repeat, padEnd,
   * join, typed arrays, ArrayBuffer): locally workerd enforces no memory limit; deployed, Cloudflare
   * stops an isolate at 128 MB.
   */
  allocation: 8_000_000,
  /** Console lines kept, and their characters in all; the rest are counted in `data.logs_dropped`. */
  logLines: 100,
  logChars: 8_000,
} as const;
