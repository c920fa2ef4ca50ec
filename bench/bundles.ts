/**
 * Bundle sizes of every deployable worker (each tool alone, and the gateway), from the same
 * offline dry-run deploy a user runs (`npm run deploy -- <tool-id> --dry-run`).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deployArgs, toolFiles } from '../local/deploy.ts';
import { wranglerEnv } from '../local/wrangler-env.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface BundleSize {
  worker: string;
  kib: number;
  gzipKib: number;
}

export function measureBundles(): BundleSize[] {
  const targets: (string | undefined)[] = [...toolFiles().keys(), undefined];
  return targets.map((toolId) => {
    const result = spawnSync(join(ROOT, 'node_modules/.bin/wrangler'), deployArgs(toolId, true), {
      cwd: ROOT,
      env: wranglerEnv(ROOT, { offline: true }),
      encoding: 'utf8',
    });
    const match = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(result.stdout + result.stderr);
    if (!match) throw new Error(`No bundle size in the dry run of ${toolId ?? 'the gateway'}:\n${result.stderr}`);
    return { worker: toolId ?? 'gateway (all tools)', kib: Number(match[1]), gzipKib: Number(match[2]) };
  });
}

export function bundlesMarkdown(sizes: BundleSize[]): string {
  return ['| worker | minified KiB | gzip KiB |', '|---|---:|---:|', ...sizes.map((s) => `| ${s.worker} | ${s.kib} | ${s.gzipKib} |`)].join('\n');
}

if (import.meta.main) console.log(bundlesMarkdown(measureBundles()));
