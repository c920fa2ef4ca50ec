/**
 * The environment wrangler runs with: no metrics, no update check, no network look-ups. Offline
 * runs (dev, dry-run deploys) also keep wrangler's config inside the project (.wrangler/,
 * git-ignored) and give workerd the V8 flags below; a real deploy keeps the user's own config,
 * where `wrangler login` stored the credentials.
 */
import { join } from 'node:path';

/**
 * V8 flags for the workerd processes a local `wrangler dev` runs (Miniflare passes
 * `MINIFLARE_WORKERD_V8_FLAGS` to workerd's `v8Flags`); a value already in the environment wins.
 * `--gc-global` makes every collection a full one. Without it workerd's resident memory grows by
 * a few hundred MiB over thousands of calls, in the worker's workerd and in wrangler's proxy alike:
 * what grows is native memory that workerd's allocator still counts as allocated, held by objects
 * of calls long answered that only a full collection frees, and V8 starts one by the growth of
 * the isolate's JavaScript heap, which stays small. `--optimize-for-size` alone keeps that heap
 * small and the growth the same; with `--gc-global` alone the heap V8 holds still grows from 44
 * to 71 MiB in the first 4,000 calls. Together they keep both processes flat, at a cost per call
 * within the noise of a busy 2-core machine (figures in bench/RESULTS.md, "Memory of workerd
 * under a long run").
 */
export const WORKERD_V8_FLAGS = '--gc-global --optimize-for-size';

/** The environment of a wrangler command; `offline` for dev and dry-run deploys. */
export function wranglerEnv(root: string, { offline }: { offline: boolean }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    WRANGLER_SEND_METRICS: 'false',
    WRANGLER_HIDE_BANNER: 'true',
  };
  if (offline) {
    env.CLOUDFLARE_CF_FETCH_ENABLED = 'false';
    env.XDG_CONFIG_HOME = join(root, '.wrangler', 'config');
    env.MINIFLARE_WORKERD_V8_FLAGS ??= WORKERD_V8_FLAGS;
  }
  return env;
}
