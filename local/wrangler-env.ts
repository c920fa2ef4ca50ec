/**
 * The environment wrangler runs with: no metrics, no update check, no network look-ups. Offline
 * runs (dev, dry-run deploys) also keep wrangler's config inside the project (.wrangler/,
 * git-ignored); a real deploy keeps the user's own config, where `wrangler login` stored the
 * credentials. workerd runs with V8's defaults but for {@link LOCAL_V8_FLAGS}, and whatever
 * `MINIFLARE_WORKERD_V8_FLAGS` adds.
 */
import { join } from 'node:path';

/**
 * V8 flags that keep a long-running local workerd's memory flat. Without them workerd's resident
 * memory grows by a few hundred MiB over thousands of calls (native memory held by objects of calls
 * long answered, which only a full collection frees). `--gc-global` makes every collection a full
 * one: the worker's workerd then levels off about 22 % above its size after the first 2,000 calls;
 * with `--optimize-for-size` beside it, both workerd processes stay within 20 %. They cost CPU: a
 * CPU-heavy call (cluster-by-similarity of 1,000 tasks) took about 1.3 times as long with
 * `--gc-global` and 3.5 times with both. So nothing sets them by default: `npm run dev`, the tests
 * and the benches run V8's defaults (but for LOCAL_V8_FLAGS, which costs nothing until a regular
 * expression backtracks), and tell the truth about speed. Set
 * `MINIFLARE_WORKERD_V8_FLAGS` to these for a local stack that serves many thousands of calls;
 * `node bench/memory.ts --v8-flags="…"` measures them. Figures in bench/RESULTS.md, "Memory of
 * workerd under a long run".
 */
export const FLAT_MEMORY_V8_FLAGS = '--gc-global --optimize-for-size';

/**
 * The V8 flag every local workerd runs with (`npm run dev`, the tests, the benches): a regular
 * expression that backtracks past V8's threshold is finished by V8's linear-time engine instead.
 * Code mode's guard (shared/codemode/guard.ts) stops loops and recursion, but a catastrophic
 * regular expression, `/(a+)+$/` over a long string, runs inside one builtin call that no guard
 * reaches, and locally nothing else stops it: workerd enforces no CPU limit on a loaded worker, and
 * the process stopped serving every request until the match ended (217 s for 33 characters).
 * Deployed, Cloudflare's CPU limit stops it. Patterns the linear engine cannot run (backreferences,
 * lookarounds, some counted repetitions) still backtrack: docs/code-mode.md says so.
 */
export const LOCAL_V8_FLAGS = '--enable-experimental-regexp-engine-on-excessive-backtracks';

/** {@link LOCAL_V8_FLAGS} with the flags `MINIFLARE_WORKERD_V8_FLAGS` already holds (e.g. FLAT_MEMORY_V8_FLAGS). */
export function localV8Flags(extra = process.env.MINIFLARE_WORKERD_V8_FLAGS ?? ''): string {
  const flags = extra.split(' ').filter(Boolean);
  return [...new Set([LOCAL_V8_FLAGS, ...flags])].join(' ');
}

/**
 * The environment of a wrangler command; `offline` for dev and dry-run deploys, whose workerd runs
 * with `v8Flags` (default {@link localV8Flags}).
 */
export function wranglerEnv(
  root: string,
  { offline, v8Flags = localV8Flags() }: { offline: boolean; v8Flags?: string },
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    WRANGLER_SEND_METRICS: 'false',
    WRANGLER_HIDE_BANNER: 'true',
  };
  if (offline) {
    env.CLOUDFLARE_CF_FETCH_ENABLED = 'false';
    env.XDG_CONFIG_HOME = join(root, '.wrangler', 'config');
    env.MINIFLARE_WORKERD_V8_FLAGS = v8Flags;
  }
  return env;
}
