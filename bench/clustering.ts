/**
 * Clustering benchmark: `agglomerativeClustering` (functions/task-analysis/lib/clustering.ts) next to
 * ml-hclust's `agnes` — the same linkage on distance = 1 − cosine similarity, given the vectors and a
 * distance function, so both compute their n² similarities — on the same seeded clustered 1536-d data,
 * in the same process. Run with `npm run bench -- clustering` (which also writes its section of
 * bench/RESULTS.md), or `node --import ./local/wasm-imports.ts bench/clustering.ts` to print it only.
 *
 * - time: median and p95 wall time of BENCH.runs calls after BENCH.warmup calls, each call after a full
 *   GC (ml-hclust: fewer runs, one call takes seconds at n = 1000), and the median CPU time of the
 *   process per call (which a busy machine inflates much less than wall time); and the median CPU time
 *   of the similarity matrix alone (`cosineSimilarities`), to show what dominates;
 * - cold: one call in a fresh child process (unoptimised code, as after a Worker's cold start), and its
 *   peak memory: growth of the resident set's high-water mark (Linux VmHWM, reset through
 *   /proc/self/clear_refs) during the call, after a full GC — a fresh process per measurement, so
 *   neither implementation reuses memory the other, or an earlier run, left behind;
 * - agreement: ml-hclust's tree cut at distance 1 − threshold gives the same partition as ours; and ours
 *   is identical (clusters, mean similarities and the whole merge tree) to the O(n³) reference.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { agnes } from 'ml-hclust';
import { agglomerativeClustering, cosineSimilarities, type Linkage } from '../functions/task-analysis/lib/clustering.ts';
import { clusteredVectors, referenceClustering } from '../test/unit/clustering-reference.ts';

const BENCH = {
  sizes: [50, 500, 1000],
  dimensions: 1536,
  threshold: 0.75,
  linkages: ['average', 'complete', 'single'] as Linkage[],
  warmup: 3,
  runs: 21,
  peerRuns: (n: number) => (n >= 1000 ? 1 : n >= 500 ? 3 : 9),
  seed: 1,
  target: { n: 1000, ms: 300 },
};

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

type Implementation = 'edge-tools' | 'ml-hclust';

interface OneCall {
  ms: number;
  /** Undefined where Linux's /proc is missing. */
  peakMb: number | undefined;
}

interface Timing {
  medianMs: number;
  p95Ms: number;
  /** Median CPU time of the process (all threads) per call: what the call cost, however busy the machine. */
  cpuMedianMs: number;
}

interface Row {
  n: number;
  linkage: Linkage;
  clusters: number;
  ours: Timing;
  /** The similarity matrix alone (the same for every linkage of one n); its CPU time is reported. */
  similarities: Timing;
  peer: Timing;
  /** One call in a fresh process: the first, unoptimised run, as after a Worker's cold start. */
  oursCold: OneCall;
  peerCold: OneCall;
  agreesWithPeer: boolean;
  identicalToReference: boolean;
}

/** Runs the benchmark and returns its report as a markdown section. */
export async function runClusteringBench(): Promise<string> {
  const load = [loadavg()[0]!];
  const rows: Row[] = [];
  for (const n of BENCH.sizes) {
    const vectors = data(n);
    const similarities = time(() => cosineSimilarities(vectors), BENCH.runs);
    for (const linkage of BENCH.linkages) rows.push(measureCase(vectors, linkage, similarities));
  }
  load.push(loadavg()[0]!);
  return report(rows, load);
}

function data(n: number): Float32Array[] {
  return clusteredVectors({ seed: BENCH.seed, n, dimensions: BENCH.dimensions });
}

function ours(vectors: Float32Array[], linkage: Linkage) {
  return () => agglomerativeClustering(vectors, { threshold: BENCH.threshold, linkage });
}

function peer(vectors: Float32Array[], linkage: Linkage) {
  return () => agnes(vectors, { method: linkage, distanceFunction: cosineDistance });
}

function measureCase(vectors: Float32Array[], linkage: Linkage, similarities: Timing): Row {
  const n = vectors.length;
  const runOurs = ours(vectors, linkage);
  const runPeer = peer(vectors, linkage);
  for (let i = 0; i < BENCH.warmup; i++) runOurs();
  const result = runOurs();
  const tree = runPeer();
  return {
    n,
    linkage,
    clusters: result.clusters.length,
    ours: time(runOurs, BENCH.runs),
    similarities,
    peer: time(runPeer, BENCH.peerRuns(n)),
    oursCold: oneCallInChild('edge-tools', n, linkage),
    peerCold: oneCallInChild('ml-hclust', n, linkage),
    agreesWithPeer: isDeepStrictEqual(
      canonical(result.clusters.map((c) => c.members)),
      canonical(tree.cut(1 - BENCH.threshold).map((c) => c.indices())),
    ),
    identicalToReference: isDeepStrictEqual(result, referenceClustering(vectors, { threshold: BENCH.threshold, linkage })),
  };
}

function cosineDistance(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let k = 0; k < a.length; k++) s += a[k]! * b[k]!;
  return 1 - s;
}

/** A partition as sorted member lists in order of their smallest member. */
function canonical(partition: number[][]): number[][] {
  return partition.map((members) => [...members].sort((a, b) => a - b)).sort((a, b) => a[0]! - b[0]!);
}

/** Wall and CPU time of `runs` calls, each after a full GC so that no call pays for an earlier one's garbage. */
function time(run: () => unknown, runs: number): Timing {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let r = 0; r < runs; r++) {
    gc();
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    run();
    wall.push(performance.now() - started);
    const { user, system } = process.cpuUsage(cpuBefore);
    cpu.push((user + system) / 1000);
  }
  return { medianMs: rank(wall, 0.5), p95Ms: rank(wall, 0.95), cpuMedianMs: rank(cpu, 0.5) };
}

/** Nearest-rank quantile: with 21 samples, the median is the 11th smallest and the p95 the 20th. */
function rank(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

const CHILD_FLAG = '--one-call';

/** Time and peak memory of one call, measured by a fresh child process running this file. */
function oneCallInChild(implementation: Implementation, n: number, linkage: Linkage): OneCall {
  const args = [...process.execArgv, fileURLToPath(import.meta.url), CHILD_FLAG, implementation, String(n), linkage];
  return JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8' })) as OneCall;
}

/** The child's side: one call after a full GC; peak memory is the VmHWM growth during it. */
function oneCall(implementation: Implementation, n: number, linkage: Linkage): OneCall {
  const run = (implementation === 'edge-tools' ? ours : peer)(data(n), linkage);
  gc();
  const before = statusKb('VmRSS');
  const tracked = before !== undefined && resetPeak();
  const started = performance.now();
  run();
  const ms = performance.now() - started;
  return { ms, peakMb: tracked ? (statusKb('VmHWM')! - before) / 1024 : undefined };
}

function statusKb(field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Resets VmHWM to the current RSS (Linux >= 4.0). */
function resetPeak(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

function report(rows: Row[], load: number[]): string {
  const target = rows.find((r) => r.n === BENCH.target.n && r.linkage === 'average');
  const mb = (x: number | undefined) => (x === undefined ? 'n/a' : x.toFixed(1));
  const lines = [
    '## Clustering (bench/clustering.ts)',
    '',
    `Seeded clustered unit vectors (${BENCH.dimensions}-d: random centres plus noise, 10 % outliers), threshold ${BENCH.threshold}; ` +
      'edge-tools `agglomerativeClustering` (similarities by its WebAssembly SIMD kernel) vs ml-hclust `agnes` (same linkage, ' +
      `distance 1 − cosine, its own distance matrix) in the same process, Node ${process.versions.node}, load average ` +
      `${load.map((x) => x.toFixed(1)).join(' → ')} (start → end of this section). Time: median and p95 of ${BENCH.runs} runs after ` +
      `${BENCH.warmup} warm-up calls, each after a full GC; CPU: median CPU time of the process (all threads) per call; ` +
      'of which similarity matrix: median CPU time of `cosineSimilarities` alone; ' +
      'ml-hclust: median of 9 runs at n = 50, 3 at n = 500, 1 at n = 1000. Cold: the first call in a fresh process. Peak memory: ' +
      'growth of the resident high-water mark (VmHWM) during that call, after a full GC. Same partition: ml-hclust cut at ' +
      'distance 1 − threshold. Reference: identical result (clusters, mean similarities, merge tree) to the O(n³) textbook algorithm.',
    '',
    '| n | linkage | clusters | edge-tools ms median | p95 | CPU | of which similarity matrix (CPU) | ml-hclust ms median | CPU | speed-up | edge-tools cold ms | ml-hclust cold ms | edge-tools peak MB | ml-hclust peak MB | same partition as ml-hclust | identical to reference |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.n} | ${r.linkage} | ${r.clusters} | ${r.ours.medianMs.toFixed(1)} | ${r.ours.p95Ms.toFixed(1)} | ${r.ours.cpuMedianMs.toFixed(1)} | ` +
        `${r.similarities.cpuMedianMs.toFixed(1)} | ${r.peer.medianMs.toFixed(0)} | ${r.peer.cpuMedianMs.toFixed(0)} | ${(r.peer.medianMs / r.ours.medianMs).toFixed(0)}× | ${r.oursCold.ms.toFixed(0)} | ${r.peerCold.ms.toFixed(0)} | ` +
        `${mb(r.oursCold.peakMb)} | ${mb(r.peerCold.peakMb)} | ${r.agreesWithPeer ? 'yes' : '**no**'} | ${r.identicalToReference ? 'yes' : '**no**'} |`,
    ),
  ];
  if (target) {
    const met = target.ours.medianMs <= BENCH.target.ms;
    lines.push(
      '',
      `Target: ${BENCH.target.n} × ${BENCH.dimensions} (average) <= ${BENCH.target.ms} ms: median ${target.ours.medianMs.toFixed(0)} ms, ` +
        `p95 ${target.ours.p95Ms.toFixed(0)} ms (CPU ${target.ours.cpuMedianMs.toFixed(0)} ms), ${met ? 'met' : '**missed**'}.`,
    );
  }
  return lines.join('\n');
}

if (process.argv[2] === CHILD_FLAG) {
  const [implementation, n, linkage] = process.argv.slice(3) as [Implementation, string, Linkage];
  console.log(JSON.stringify(oneCall(implementation, Number(n), linkage)));
} else if (import.meta.main) {
  console.log(await runClusteringBench());
}
