/**
 * Cold start in workerd: a fresh workerd (through Miniflare) loads a worker's deployed bundle and
 * answers its first request (`GET /health`, which does no I/O), for a tool's own worker (log-mood)
 * and the gateway, built from this checkout and from {@link COLD_START_BASELINE}.
 *
 * Each sample starts a new workerd process: the time from starting it to the first answer includes
 * the process's own start, so the same is measured for a worker of one line (the floor), and what
 * the bundle adds is the difference. Samples of the workers are interleaved, so that load on the
 * machine falls on all of them alike. On Linux the CPU time workerd spent until its first answer
 * (all its threads, from /proc) is measured too: on a machine busy with other work it waits less
 * on the others than the elapsed time does.
 *
 * Run with `node bench/cold-start.ts [--baseline <commit>] [--samples <n>]`; `runColdStartBench()`
 * returns the markdown section for RESULTS.md.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { Miniflare } from 'miniflare';
import { extractCommit, measureBundles, type BundleSize } from './bundles.ts';

/** The commit compared with: the last one before tools built their schemas on first use. */
export const COLD_START_BASELINE = '3b00b18468f02c396f2525661f7244be3f2119a3';

const WORKERS = ['log-mood', 'gateway'];
const COMPATIBILITY_DATE = '2026-10-01';

interface Sample {
  /** From starting workerd until it is ready (the script loaded). */
  readyMs: number;
  /** From starting workerd until the first answer. */
  totalMs: number;
  /** CPU time workerd used until the first answer, all threads (Linux only). */
  cpuMs?: number;
}

/** The processes this one started (their ids), read from /proc; none where there is no /proc. */
function childProcesses(): Set<number> {
  if (!existsSync('/proc/self/stat')) return new Set();
  const children = new Set<number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces, so fields are counted after its ')'.
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid) children.add(Number(entry));
    } catch {
      // The process ended while the list was read.
    }
  }
  return children;
}

/** CPU time a process has used so far, all threads, in ms (the scheduler's own count, in ns). */
function cpuTimeMs(pid: number): number {
  let ns = 0;
  for (const thread of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, 'utf8').split(' ')[0]);
  return ns / 1e6;
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
  const before = childProcesses();
  const startedAt = performance.now();
  const miniflare = new Miniflare({ workers: [{ config: { name: 'worker', compatibilityDate: COMPATIBILITY_DATE, manifest: { mainModule: main, modules } } }] });
  try {
    await miniflare.ready;
    const readyMs = performance.now() - startedAt;
    const response = await miniflare.dispatchFetch('http://localhost/health');
    await response.text();
    if (!response.ok) throw new Error(`GET /health answered ${response.status} (${script})`);
    const totalMs = performance.now() - startedAt;
    // The workerd Miniflare started for this sample: the one process that was not there before.
    const started = [...childProcesses()].filter((pid) => !before.has(pid));
    return { readyMs, totalMs, ...(started.length === 1 ? { cpuMs: cpuTimeMs(started[0]!) } : {}) };
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
export async function runColdStartBench({ baseline = COLD_START_BASELINE, samples = 9 } = {}): Promise<string> {
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
    const medianOf = (index: number, measure: (sample: Sample) => number | undefined) => {
      const values = results[index]!.map(measure).filter((value) => value !== undefined);
      return values.length === samples ? median(values) : undefined;
    };
    const shown = (value: number | undefined) => (value === undefined ? '–' : value.toFixed(0));
    const floorTotal = medianOf(0, (sample) => sample.totalMs)!;
    const floorCpu = medianOf(0, (sample) => sample.cpuMs);
    const rows = bundles.map((bundle, index) => {
      const total = medianOf(index, (sample) => sample.totalMs)!;
      const cpu = medianOf(index, (sample) => sample.cpuMs);
      const size = bundle.size ? `${bundle.size.kib} / ${bundle.size.gzipKib}` : '–';
      const added = index === 0 ? ['–', '–'] : [shown(total - floorTotal), shown(cpu !== undefined && floorCpu !== undefined ? cpu - floorCpu : undefined)];
      return `| ${bundle.label} | ${size} | ${shown(medianOf(index, (sample) => sample.readyMs))} | ${shown(total)} | ${added[0]} | ${shown(cpu)} | ${added[1]} |`;
    });
    return [
      '## Cold start in workerd (bench/cold-start.ts)',
      '',
      `A new workerd (Miniflare, one worker: the bundle) per sample loads the dry-run bundle and answers \`GET /health\`; medians of ${samples} samples per worker, interleaved. Before: commit ${baseline.slice(0, 7)}. What the bundle adds = the worker's median minus the floor's (workerd's own start), in elapsed time and in workerd's CPU time (all its threads, until the first answer).`,
      '',
      '| worker | bundle KiB (minified / gzip) | start to ready, ms | start to first answer, ms | added by the bundle, ms | workerd CPU until the answer, ms | CPU added by the bundle, ms |',
      '|---|---|---:|---:|---:|---:|---:|',
      ...rows,
    ].join('\n');
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    old.dispose();
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { baseline: { type: 'string', default: COLD_START_BASELINE }, samples: { type: 'string', default: '9' } } });
  console.log(await runColdStartBench({ baseline: values.baseline, samples: Number(values.samples) }));
}
