/**
 * Cycle detection of detect-dependencies (`findCycles`: strongly connected components and one
 * shortest example per group), next to what it replaced: enumerating every elementary cycle
 * (Johnson's algorithm, the `elementary-circuits-directed-graph` package), on the same graphs.
 * Run with `node bench/cycles.ts`; `runCyclesBench()` returns the markdown section for RESULTS.md.
 *
 * Graphs of 50 tasks (detect-dependencies' maximum):
 * - fully connected: every task blocks every other (2,450 edges), the worst case;
 * - realistic: 50 consecutive tasks of the synthetic corpus (local/corpus.ts) through the offline
 *   heuristic, as detect-dependencies sees them, plus a few contradicting edges a model might add;
 * - random sparse: 50 tasks, 100 random edges (seeded).
 * The enumeration runs on complete graphs of growing size until one takes longer than its budget.
 */
import { createRequire } from 'node:module';
import { findCycles, type Edge } from '../functions/task-analysis/lib/graph.ts';
import { extractTasks } from '../functions/documents/lib/task-extraction.ts';
import { generateCorpus } from '../local/corpus.ts';
import { seededRandom } from '../local/random.ts';
import { offlineDependencyDetector } from '../shared/providers/offline.ts';

/** Johnson's algorithm: every elementary circuit of an adjacency list (the package has no types). */
const findCircuits = createRequire(import.meta.url)('elementary-circuits-directed-graph') as (
  adjacency: number[][],
  onCircuit?: (circuit: number[]) => void,
) => number[][];

const BENCH = { tasks: 50, runs: 50, enumerationBudgetMs: 2_000 };

/** Runs the benchmark and returns its report as a markdown section. */
export async function runCyclesBench(): Promise<string> {
  const graphs: [string, Edge[]][] = [
    [`${BENCH.tasks} tasks, fully connected`, complete(BENCH.tasks)],
    [`${BENCH.tasks} tasks, realistic (corpus + offline heuristic + 3 contradictions)`, await realistic()],
    [`${BENCH.tasks} tasks, random sparse (100 edges)`, randomSparse(BENCH.tasks, 100)],
  ];
  const lines = [
    '## Cycle detection (bench/cycles.ts)',
    '',
    `findCycles (Tarjan's strongly connected components + one shortest example per group): median and max of ${BENCH.runs} runs after 5 warm-up runs, Node ${process.versions.node}.`,
    '',
    '| graph | edges | groups | tasks in groups | findCycles median | findCycles max |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const [name, edges] of graphs) {
    const { groups } = findCycles(edges);
    const times = timeRuns(() => findCycles(edges));
    lines.push(
      `| ${name} | ${edges.length} | ${groups.length} | ${groups.reduce((n, g) => n + g.length, 0)} | ${ms(median(times))} | ${ms(Math.max(...times))} |`,
    );
  }

  lines.push(
    '',
    `Peer: enumerating every elementary cycle (what detect-dependencies did before), Johnson's algorithm (elementary-circuits-directed-graph), on complete graphs until one run passes ${BENCH.enumerationBudgetMs / 1000} s; findCycles on the same graphs.`,
    '',
    '| complete graph | elementary cycles | enumeration | findCycles |',
    '|---:|---:|---:|---:|',
  );
  for (let n = 4; n <= BENCH.tasks; n++) {
    const edges = complete(n);
    const adjacency = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => j).filter((j) => j !== i));
    let circuits = 0;
    const started = performance.now();
    findCircuits(adjacency, () => void circuits++);
    const enumerationMs = performance.now() - started;
    lines.push(`| ${n} | ${circuits.toLocaleString('en')} | ${ms(enumerationMs)} | ${ms(median(timeRuns(() => findCycles(edges))))} |`);
    if (enumerationMs > BENCH.enumerationBudgetMs) {
      lines.push('', `Stopped at ${n} tasks: 50 fully connected tasks have more than 10^62 elementary cycles.`);
      break;
    }
  }
  return lines.join('\n') + '\n';
}

function timeRuns(run: () => unknown): number[] {
  for (let i = 0; i < 5; i++) run();
  return Array.from({ length: BENCH.runs }, () => {
    const started = performance.now();
    run();
    return performance.now() - started;
  });
}

const id = (i: number) => `task-${String(i).padStart(2, '0')}`;

function complete(n: number): Edge[] {
  const edges: Edge[] = [];
  for (let s = 0; s < n; s++) for (let t = 0; t < n; t++) if (s !== t) edges.push({ source_task_id: id(s), target_task_id: id(t) });
  return edges;
}

function randomSparse(n: number, count: number): Edge[] {
  const random = seededRandom(7);
  return Array.from({ length: count }, () => {
    const s = Math.floor(random() * n);
    const t = (s + 1 + Math.floor(random() * (n - 1))) % n;
    return { source_task_id: id(s), target_task_id: id(t) };
  });
}

/** 50 consecutive corpus tasks through the offline heuristic, plus 3 edges that contradict its order. */
async function realistic(): Promise<Edge[]> {
  const [document] = generateCorpus({ documents: 1, tasks: BENCH.tasks, seed: 3 });
  const tasks = extractTasks(document!.content).map((task, position) => ({
    id: id(position),
    text: task.text,
    documentId: 'doc',
    documentTitle: document!.title,
    position,
  }));
  const detected = await offlineDependencyDetector.detect(tasks, {});
  const edges = detected
    .filter((r) => r.type !== 'related')
    .map((r) => ({ source_task_id: r.sourceTaskId, target_task_id: r.targetTaskId }));
  // A model's mistakes: a few edges pointing back up the chain.
  for (const edge of edges.slice(0, 3)) edges.push({ source_task_id: edge.target_task_id, target_task_id: edge.source_task_id });
  return edges;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (x: number) => (x < 1 ? `${(x * 1000).toFixed(0)} µs` : `${x.toFixed(1)} ms`);

if (import.meta.main) console.log(await runCyclesBench());
