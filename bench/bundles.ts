/**
 * Bundle sizes of every deployable worker (each tool alone, and the gateway), from the same
 * offline dry-run deploy a user runs (`npm run deploy -- <tool-id> --dry-run`), next to the same
 * workers built from a baseline commit, and what weighs what inside them (esbuild's metafile,
 * which wrangler writes with `--metafile`).
 *
 * The baseline is extracted with `git archive` into a temporary folder that shares this checkout's
 * node_modules, so both are bundled by the same wrangler and esbuild.
 *
 * Run with `node bench/bundles.ts [--baseline <commit>]`; `runBundlesBench()` returns the markdown
 * section for RESULTS.md.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { wranglerEnv } from '../local/wrangler-env.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * The commit bundle sizes are compared with: the last one before every worker took Hono's
 * `hono/tiny` preset and the Workers entry of `@upstash/redis`.
 */
export const BASELINE_COMMIT = '59ffe6336197a7aeddc31770d1d649bb5f5c8d21';

/**
 * Targets (gzip, as wrangler counts it): far under what Workers accept (3 MB gzip on the free
 * plan), kept so that a regression (every zod locale, MCP in a tool worker) shows.
 *
 * A tool's own worker takes API keys only and bundles no OAuth library: 200.
 *
 * The gateway's goal was 320, and it conflicts with the stack: it measures about 360. Split by its
 * source map and each part gzipped alone, its libraries weigh about 228 KiB gzip and its own code
 * (29 tools, MCP, OpenAPI, OAuth consent, the dashboard, observability) about 127. The libraries
 * are Neon's driver (one prebuilt file with its WebSocket client, 146 KiB minified: the gateway
 * went from 260 to 307 KiB gzip when it replaced a hand-written client), MCP's SDK (224 KiB with
 * the JSON Schema validator its Workers build always imports), OAuth's library (one file, 120 KiB;
 * 41 KiB gzip), zod with the JSON Schema generator the SDK needs too (114), @upstash/redis (one
 * class with every command, 93), drizzle (91, every column type through `pgTable`), hono,
 * @upstash/ratelimit and ts-fsrs. The documented lighter entries there are (`hono/tiny`,
 * `@upstash/redis/cloudflare`) are taken; 320 would take a stack library or a third of the
 * gateway's own code out. The ceiling sits just above what is measured and stops growth.
 *
 * Since the gateway loads the MCP server on the first MCP request (a dynamic `import()`), esbuild,
 * which wrangler runs without code splitting, wraps every module that side shares with the rest
 * in a lazy initialiser and keeps more of drizzle: 8 KiB gzip more (361 to 369), for a start 30 to
 * 100 ms shorter (bench/RESULTS.md, "Cold start in workerd").
 *
 * Code mode (shared/codemode/) adds about 50 KiB gzip to the gateway (370 to 421): acorn, the
 * parser that reads and instruments an agent's code before it runs (34 KiB; the lightest
 * standard-conformant JavaScript parser, and @cloudflare/codemode's own), the type generator taken
 * from @cloudflare/codemode (3), and code mode's own code. It is loaded by the first code-mode
 * request, like the MCP server, so other routes do not start slower. The execution module the code
 * runs beside is the sandbox worker's since the code moved out of the gateway (dist/sandbox, 4.5 KiB
 * gzip); the gateway measured 425 KiB after that move.
 * The Gemini export (shared/http/gemini-export.ts), code mode's per-tool signatures and OpenAPI entries
 * and the bounds every schema now states took it to 428, hence 432.
 *
 * A tool's own worker: 200 KiB until the gate (its read-only client and the re-check of a
 * credential at each state change, shared/auth/gate.ts and verification.ts), signed API keys and
 * the accepted date ranges (shared/core/date-range.ts) added about 2 KiB gzip to every worker:
 * cluster-by-similarity, the largest (it carries every provider), measured 201.1, hence 204. What
 * is left of a tool's worker is mostly Neon's driver, zod, drizzle and @upstash/redis (about 370 of
 * its 660 KiB minified).
 */
export const TARGETS = { toolWorkerGzipKib: 204, gatewayGzipKib: 432 };

export interface BundleSize {
  /** A tool id, or `gateway`. */
  worker: string;
  kib: number;
  gzipKib: number;
  /** The bundled script, for running it (bench/cold-start.ts). */
  script: string;
  /** Minified bytes in the bundle per package (or per folder of this repository). */
  byPackage: Map<string, number>;
}

/** A checkout to bundle: this one, or a baseline commit extracted next to it. */
export interface Checkout {
  root: string;
  /** Removes a temporary checkout. */
  dispose(): void;
}

/** The baseline commit, extracted into a temporary folder sharing this checkout's node_modules. */
export function extractCommit(commit: string): Checkout {
  const root = mkdtempSync(join(tmpdir(), 'edge-tools-baseline-'));
  const archive = execFileSync('git', ['archive', '--format=tar', commit], { cwd: ROOT, maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', root], { input: archive });
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  return { root, dispose: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * Bundles the workers of the checkout at `root` (every tool and the gateway, or the `only` ones)
 * with that checkout's own `npm run deploy -- … --dry-run` arguments.
 */
export async function measureBundles(root: string = ROOT, only?: string[]): Promise<BundleSize[]> {
  const { deployArgs, toolFiles } = (await import(join(root, 'local/deploy.ts'))) as typeof import('../local/deploy.ts');
  const targets = [...toolFiles().keys(), undefined].filter((toolId) => !only || only.includes(toolId ?? 'gateway'));
  return targets.map((toolId) => {
    const worker = toolId ?? 'gateway';
    const outdir = join(root, 'dist', worker);
    const metafile = join(outdir, 'bundle-meta.json');
    const args = [...deployArgs(toolId, true), '--metafile', metafile];
    const result = spawnSync(join(ROOT, 'node_modules/.bin/wrangler'), args, {
      cwd: root,
      env: wranglerEnv(root, { offline: true }),
      encoding: 'utf8',
    });
    const match = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(result.stdout + result.stderr);
    if (!match) throw new Error(`No bundle size in the dry run of ${worker} (${root}):\n${result.stdout}\n${result.stderr}`);
    const meta = JSON.parse(readFileSync(metafile, 'utf8')) as {
      outputs: Record<string, { bytes: number; inputs: Record<string, { bytesInOutput: number }> }>;
    };
    const [script, output] = Object.entries(meta.outputs).find(([file]) => file.endsWith('.js'))!;
    return { worker, kib: Number(match[1]), gzipKib: Number(match[2]), script: join(root, script), byPackage: byPackage(output.inputs) };
  });
}

/** Groups a bundle's inputs by npm package (zod's locales apart), or by the repository folder they come from. */
function byPackage(inputs: Record<string, { bytesInOutput: number }>): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(inputs)) {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)(\/.*)?$/.exec(input);
    let key: string;
    if (pkg) key = pkg[1] === 'zod' && pkg[2]?.includes('/locales/') && !pkg[2].endsWith('/en.js') ? 'zod (other locales)' : pkg[1]!;
    else
      key = input
        .split('/')
        .slice(0, input.startsWith('functions/') || input.startsWith('shared/') ? 2 : 1)
        .join('/');
    sizes.set(key, (sizes.get(key) ?? 0) + bytesInOutput);
  }
  return sizes;
}

const kib = (bytes: number) => (bytes / 1024).toFixed(1);

/** The before/after table, every worker, with the targets. */
export function bundlesMarkdown(after: BundleSize[], before: BundleSize[] = []): string {
  const old = new Map(before.map((size) => [size.worker, size]));
  const rows = after.map((size) => {
    const target = size.worker === 'gateway' ? TARGETS.gatewayGzipKib : TARGETS.toolWorkerGzipKib;
    const was = old.get(size.worker);
    return `| ${size.worker} | ${was?.kib ?? '–'} | ${was?.gzipKib ?? '–'} | ${size.kib} | ${size.gzipKib} | ${target} | ${size.gzipKib <= target ? 'yes' : '**no**'} |`;
  });
  return [
    '| worker | before: minified KiB | before: gzip KiB | after: minified KiB | after: gzip KiB | target gzip KiB | within |',
    '|---|---:|---:|---:|---:|---:|---|',
    ...rows,
  ].join('\n');
}

/** What weighs what (minified KiB) in some workers, before and after, largest first. */
export function breakdownMarkdown(after: BundleSize[], before: BundleSize[], workers: string[]): string {
  const find = (sizes: BundleSize[], worker: string) =>
    sizes.find((size) => size.worker === worker)?.byPackage ?? new Map<string, number>();
  const columns = workers.flatMap((worker) => [find(before, worker), find(after, worker)]);
  const keys = [...new Set(columns.flatMap((column) => [...column.keys()]))];
  const weight = (key: string) => Math.max(...columns.map((column) => column.get(key) ?? 0));
  const rows = keys
    .filter((key) => weight(key) >= 1024)
    .sort((a, b) => weight(b) - weight(a))
    .map((key) => `| ${key} | ${columns.map((column) => (column.has(key) ? kib(column.get(key)!) : '–')).join(' | ')} |`);
  const header = `| package or folder | ${workers.flatMap((worker) => [`${worker} before`, `${worker} after`]).join(' | ')} |`;
  return [header, `|---|${columns.map(() => '---:').join('|')}|`, ...rows].join('\n');
}

/** Measures this checkout and the baseline, and returns the markdown section. */
export async function runBundlesBench({ baseline = BASELINE_COMMIT } = {}): Promise<string> {
  const old = extractCommit(baseline);
  try {
    const before = await measureBundles(old.root);
    const after = await measureBundles(ROOT);
    return bundlesSection(after, before, baseline);
  } finally {
    old.dispose();
  }
}

export function bundlesSection(after: BundleSize[], before: BundleSize[], baseline: string): string {
  return [
    '## Bundle sizes (`npm run deploy -- <tool-id> --dry-run`)',
    '',
    `Sizes as wrangler prints them for the upload (minified; gzip), each tool's own worker and the gateway (\`npm run deploy -- --all --dry-run\`). Before: commit ${baseline.slice(0, 7)}, bundled by the same wrangler and node_modules (\`node bench/bundles.ts\`).`,
    '',
    bundlesMarkdown(after, before),
    '',
    'What weighs what, minified KiB (esbuild metafile; packages and folders of at least 1 KiB):',
    '',
    breakdownMarkdown(after, before, ['log-mood', 'gateway']),
  ].join('\n');
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { baseline: { type: 'string', default: BASELINE_COMMIT } } });
  console.log(await runBundlesBench({ baseline: values.baseline }));
}
