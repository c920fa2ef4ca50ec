/**
 * Cold start in workerd: a fresh workerd (through Miniflare) loads a worker's deployed bundle and
 * answers its first request (`GET /health`, which does no I/O), for a tool's own worker (log-mood)
 * and the gateway, built from this checkout and from the baseline commit of bench/bundles.ts.
 *
 * Each sample starts a new workerd process: the time from starting it to the first answer includes
 * the process's own start, so the same is measured for a worker of one line (the floor), and what
 * the bundle adds is the difference. Samples of the workers are interleaved, so that load on the
 * machine falls on all of them alike.
 *
 * Run with `node bench/cold-start.ts [--baseline <commit>] [--samples <n>]`; `runColdStartBench()`
 * returns the markdown section for RESULTS.md.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { Miniflare } from 'miniflare';
import { BASELINE_COMMIT, extractCommit, measureBundles, type BundleSize } from './bundles.ts';

const WORKERS = ['log-mood', 'gateway'];
const COMPATIBILITY_DATE = '2026-10-01';

interface Sample {
  /** From starting workerd until it is ready (the script loaded). */
  readyMs: number;
  /** From starting workerd until the first answer. */
  totalMs: number;
}

/**
 * Starts workerd with `script` and the modules uploaded with it (the .wasm files wrangler writes
 * next to it), asks `GET /health` once, and stops it.
 */
async function coldStart(script: string): Promise<Sample> {
  const main = basename(script);
  const modules: Record<string, { type: 'esm' | 'wasm'; contents: string | Uint8Array<ArrayBuffer> }> = { [main]: { type: 'esm', contents: readFileSync(script, 'utf8') } };
  for (const file of readdirSync(dirname(script))) {
    if (file.endsWith('.wasm')) modules[file] = { type: 'wasm', contents: new Uint8Array(readFileSync(join(dirname(script), file))) };
  }
  const startedAt = performance.now();
  const miniflare = new Miniflare({ workers: [{ config: { name: 'worker', compatibilityDate: COMPATIBILITY_DATE, manifest: { mainModule: main, modules } } }] });
  try {
    await miniflare.ready;
    const readyMs = performance.now() - startedAt;
    const response = await miniflare.dispatchFetch('http://localhost/health');
    await response.text();
    if (!response.ok) throw new Error(`GET /health answered ${response.status} (${script})`);
    return { readyMs, totalMs: performance.now() - startedAt };
  } finally {
    await miniflare.dispose();
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** Measures the floor and each worker, before and after, `samples` times each, interleaved. */
export async function runColdStartBench({ baseline = BASELINE_COMMIT, samples = 9 } = {}): Promise<string> {
  const old = extractCommit(baseline);
  const scratch = mkdtempSync(join(tmpdir(), 'edge-tools-cold-'));
  try {
    // In a folder of its own: the modules next to a script are loaded with it.
    const floor = join(scratch, 'floor.js');
    writeFileSync(floor, "export default { fetch: () => new Response('ok') };\n");
    const bundles: { label: string; size?: BundleSize; script: string }[] = [{ label: 'floor (a worker of one line)', script: floor }];
    const before = await measureBundles(old.root, WORKERS);
    const after = await measureBundles(undefined, WORKERS);
    for (const worker of WORKERS) {
      for (const [when, sizes] of [['before', before], ['after', after]] as const) {
        const size = sizes.find((entry) => entry.worker === worker)!;
        bundles.push({ label: `${worker}, ${when}`, size, script: size.script });
      }
    }
    await coldStart(floor); // workerd's binary and Miniflare warmed up once, unreported
    const results = bundles.map(() => [] as Sample[]);
    for (let round = 0; round < samples; round++) {
      for (const [index, bundle] of bundles.entries()) results[index]!.push(await coldStart(bundle.script));
    }
    const floorTotal = median(results[0]!.map((sample) => sample.totalMs));
    const rows = bundles.map((bundle, index) => {
      const total = median(results[index]!.map((sample) => sample.totalMs));
      const ready = median(results[index]!.map((sample) => sample.readyMs));
      const size = bundle.size ? `${bundle.size.kib} / ${bundle.size.gzipKib}` : '–';
      return `| ${bundle.label} | ${size} | ${ready.toFixed(0)} | ${total.toFixed(0)} | ${index === 0 ? '–' : (total - floorTotal).toFixed(0)} |`;
    });
    return [
      '## Cold start in workerd (bench/cold-start.ts)',
      '',
      `A new workerd (Miniflare, one worker: the bundle) per sample loads the dry-run bundle and answers \`GET /health\`; medians of ${samples} samples per worker, interleaved. Before: commit ${baseline.slice(0, 7)}. What the bundle adds = the worker's median minus the floor's (workerd's own start).`,
      '',
      '| worker | bundle KiB (minified / gzip) | start to ready, ms | start to first answer, ms | added by the bundle, ms |',
      '|---|---|---:|---:|---:|',
      ...rows,
    ].join('\n');
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    old.dispose();
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { baseline: { type: 'string', default: BASELINE_COMMIT }, samples: { type: 'string', default: '9' } } });
  console.log(await runColdStartBench({ baseline: values.baseline, samples: Number(values.samples) }));
}
