/**
 * `npm run deploy -- <tool-id> [--dry-run]`: deploys one tool as its own worker (`edge-tools-<id>`),
 *   bundling that tool only.
 * `npm run deploy -- --all [--dry-run]`: deploys code mode's sandbox worker (`edge-tools-sandbox`,
 *   wrangler.sandbox.toml), then the gateway worker with every tool, whose SANDBOX service binding
 *   names it (Cloudflare refuses a binding to a worker that does not exist yet).
 * `--dry-run` bundles into dist/<name> without uploading (works offline) and prints the size.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { wranglerEnv } from './wrangler-env.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FUNCTIONS = join(ROOT, 'functions');

/** Tool files by id: functions/<toolset>/<tool-id>.ts (helpers live in lib/ folders). */
export function toolFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const toolset of readdirSync(FUNCTIONS)) {
    const folder = join(FUNCTIONS, toolset);
    if (!statSync(folder).isDirectory()) continue;
    for (const file of readdirSync(folder)) {
      if (file.endsWith('.ts') && !file.endsWith('.d.ts')) files.set(file.slice(0, -3), join(folder, file));
    }
  }
  return files;
}

/** The sandbox worker's own wrangler configuration. */
export const SANDBOX_CONFIG = 'wrangler.sandbox.toml';

/** The wrangler arguments that build the sandbox worker (shared/codemode/sandbox-worker.ts). */
export function sandboxDeployArgs(dryRun: boolean): string[] {
  const args = ['deploy', '--minify', '--config', SANDBOX_CONFIG];
  if (dryRun) args.push('--dry-run', '--outdir', join('dist', 'sandbox'));
  return args;
}

/**
 * The gateway's Cron Trigger, hourly: retention of the trace and the purge of expired idempotency
 * records (the `scheduled` handler of shared/runtime/worker.ts). It is given to the gateway here, not
 * in wrangler.toml, so that a tool's own worker, built from the same file, has none: a Workers Free
 * account has 5 Cron Triggers in all, and one run per deployment is enough (docs/deploy.md).
 */
export const GATEWAY_CRON = '17 * * * *';

/** The wrangler arguments that build the worker of one tool, or of the gateway (`undefined`). */
export function deployArgs(toolId: string | undefined, dryRun: boolean): string[] {
  const outName = toolId ?? 'gateway';
  const args = ['deploy', '--minify'];
  if (!toolId) args.push('--triggers', GATEWAY_CRON);
  if (toolId) {
    const file = toolFiles().get(toolId)!;
    args.push(
      'functions/tool-worker.ts',
      '--name',
      `edge-tools-${toolId}`,
      '--alias',
      `edge-tools-selected-tool:./${relative(ROOT, file)}`,
    );
  }
  if (dryRun) args.push('--dry-run', '--outdir', join('dist', outName));
  return args;
}

function main(argv: string[]): number {
  const dryRun = argv.includes('--dry-run');
  const targets = argv.filter((arg) => !arg.startsWith('--'));
  const all = argv.includes('--all');
  const known = toolFiles();
  if (all === targets.length > 0 || targets.length > 1) {
    console.error(
      `Usage: npm run deploy -- <tool-id> [--dry-run]  |  npm run deploy -- --all [--dry-run]\nTools: ${[...known.keys()].join(', ')}`,
    );
    return 2;
  }
  const toolId = targets[0];
  if (toolId !== undefined && !known.has(toolId)) {
    console.error(`There is no tool '${toolId}'. Tools: ${[...known.keys()].join(', ')}`);
    return 2;
  }
  const runs = toolId === undefined ? [sandboxDeployArgs(dryRun), deployArgs(undefined, dryRun)] : [deployArgs(toolId, dryRun)];
  for (const args of runs) {
    const result = spawnSync(join(ROOT, 'node_modules/.bin/wrangler'), args, {
      cwd: ROOT,
      stdio: 'inherit',
      env: wranglerEnv(ROOT, { offline: dryRun }),
    });
    if (result.status !== 0) return result.status ?? 1;
  }
  return 0;
}

if (import.meta.main) process.exit(main(process.argv.slice(2)));
