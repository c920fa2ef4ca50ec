/**
 * Clustering benchmark: `agglomerativeClustering` (functions/task-analysis/lib/clustering.ts) next to
 * ml-hclust's `agnes` — the same linkage on distance = 1 − cosine similarity, given the vectors and a
 * distance function, so both compute their n² similarities — on the same seeded clustered 1536-d data,
 * in the same process. Run with `node --import ./local/wasm-imports.ts bench/clustering.ts`; `runClusteringBench()` returns the report
 * as a markdown section for bench/RESULTS.md.
 *
 * - time: median (and minimum) wall time of BENCH.runs calls after BENCH.warmup calls, each call after a
 *   full GC (ml-hclust: fewer runs, one call takes seconds at n = 1000);
 * - cold: one call in a fresh child process (unoptimised code, as after a Worker's cold start), and its
 *   peak memory: growth of the resident set's high-water mark (Linux VmHWM, reset through
 *   /proc/self/clear_refs) during the call, after a full GC — a fresh process per measurement, so
 *   neither implementation reuses memory the other, or an earlier run, left behind;
 * - agreement: ml-hclust's tree cut at distance 1 − threshold gives the same partition as ours; and ours
 *   is identical (clusters, mean similarities and the whole merge tree) to the O(n³) reference.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { agnes } from 'ml-hclust';
import { agglomerativeClustering, type Linkage } from '../functions/task-analysis/lib/clustering.ts';
import { clusteredVectors, referenceClustering } from '../test/unit/clustering-reference.ts';

const BENCH = {
  sizes: [50, 500, 1000],
  dimensions: 1536,
  threshold: 0.75,
  linkages: ['average', 'complete', 'single'] as Linkage[],
  warmup: 3,
  runs: 9,
  peerRuns: (n: number) => (n >= 1000 ? 1 : 3),
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
  minMs: number;
}

interface Row {
  n: number;
  linkage: Linkage;
  clusters: number;
  ours: Timing;
  peer: Timing;
  /** One call in a fresh process: the first, unoptimised run, as after a Worker's cold start. */
  oursCold: OneCall;
  peerCold: OneCall;
  agreesWithPeer: boolean;
  identicalToReference: boolean;
}

/** Runs the benchmark and returns its report as a markdown section. */
export async function runClusteringBench(): Promise<string> {
  const rows: Row[] = [];
  for (const n of BENCH.sizes) {
    const vectors = data(n);
    for (const linkage of BENCH.linkages) rows.push(measureCase(vectors, linkage));
  }
  return report(rows);
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

function measureCase(vectors: Float32Array[], linkage: Linkage): Row {
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

/** Wall time of `runs` calls, each after a full GC so that no call pays for an earlier one's garbage. */
function time(run: () => unknown, runs: number): Timing {
  const samples: number[] = [];
  for (let r = 0; r < runs; r++) {
    gc();
    const started = performance.now();
    run();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { medianMs: samples[Math.floor(samples.length / 2)]!, minMs: samples[0]! };
}

const CHILD_FLAG = '--one-call';

/** Time and peak memory of one call, measured by a fresh child process running this file. */
function oneCallInChild(implementation: Implementation, n: number, linkage: Linkage): OneCall {
  const output = execFileSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), CHILD_FLAG, implementation, String(n), linkage], { encoding: 'utf8' });
  return JSON.parse(output) as OneCall;
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

function report(rows: Row[]): string {
  const target = rows.find((r) => r.n === BENCH.target.n && r.linkage === 'average');
  const mb = (x: number | undefined) => (x === undefined ? 'n/a' : x.toFixed(1));
  const lines = [
    '## Clustering (bench/clustering.ts)',
    '',
    `Seeded clustered unit vectors (${BENCH.dimensions}-d: random centres plus noise, 10 % outliers), threshold ${BENCH.threshold}; ` +
      'edge-tools `agglomerativeClustering` vs ml-hclust `agnes` (same linkage, distance 1 − cosine, its own distance matrix) ' +
      `in the same process, Node ${process.versions.node}. Time: median (min) of ${BENCH.runs} runs after ${BENCH.warmup} warm-up ` +
      'calls, each after a full GC; ml-hclust: 3 runs, 1 at n = 1000. Cold: the first call in a fresh process. Peak memory: growth of ' +
      'the resident high-water mark (VmHWM) during that call, after a full GC. Same partition: ml-hclust cut at distance 1 − threshold. Reference: identical ' +
      'result (clusters, mean similarities, merge tree) to the O(n³) textbook algorithm.',
    '',
    '| n | linkage | clusters | edge-tools ms median (min) | ml-hclust ms | speed-up | edge-tools cold ms | ml-hclust cold ms | edge-tools peak MB | ml-hclust peak MB | same partition as ml-hclust | identical to reference |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.n} | ${r.linkage} | ${r.clusters} | ${r.ours.medianMs.toFixed(1)} (${r.ours.minMs.toFixed(1)}) | ` +
        `${r.peer.medianMs.toFixed(0)} | ${(r.peer.medianMs / r.ours.medianMs).toFixed(0)}× | ${r.oursCold.ms.toFixed(0)} | ${r.peerCold.ms.toFixed(0)} | ` +
        `${mb(r.oursCold.peakMb)} | ${mb(r.peerCold.peakMb)} | ${r.agreesWithPeer ? 'yes' : '**no**'} | ${r.identicalToReference ? 'yes' : '**no**'} |`,
    ),
  ];
  if (target) {
    const met = target.ours.medianMs <= BENCH.target.ms;
    lines.push('', `Target: ${BENCH.target.n} × ${BENCH.dimensions} (average) <= ${BENCH.target.ms} ms: median ${target.ours.medianMs.toFixed(0)} ms, ${met ? 'met' : '**missed**'}.`);
  }
  return lines.join('\n');
}

if (process.argv[2] === CHILD_FLAG) {
  const [implementation, n, linkage] = process.argv.slice(3) as [Implementation, string, Linkage];
  console.log(JSON.stringify(oneCall(implementation, Number(n), linkage)));
} else if (import.meta.main) {
  console.log(await runClusteringBench());
}
