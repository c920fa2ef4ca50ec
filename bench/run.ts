/**
 * `npm run bench`: runs every benchmark, prints the figures, and writes bench/RESULTS.md with the
 * machine and the date. `npm run bench -- <section> ...` runs only the named sections and replaces
 * just their sections of RESULTS.md. Benchmarks are run on demand, never in the test suite.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { describeRoundTrips } from '../local/round-trip.ts';
import { BENCH_ROUND_TRIPS, loadAverage } from './measure.ts';

interface Section {
  /** The name on the command line. */
  name: string;
  /** What is printed while it runs. */
  progress: string;
  /** Its markdown, starting with its `## ` heading. Each section imports its bench only when it runs. */
  run(): Promise<string>;
}

const SECTIONS: Section[] = [
  {
    name: 'tool-list',
    progress: 'What the tool list costs an agent...',
    run: async () => (await import('./tool-list.ts')).runToolListBench(),
  },
  {
    name: 'code-mode',
    progress: 'The seed story one call per step and in code mode, on wrangler dev and the demo corpus...',
    run: async () => (await import('./code-mode.ts')).runCodeModeBench(),
  },
  {
    name: 'code-mode-attacks',
    progress: "What each code-mode attack costs another tenant's latency, on wrangler dev (about 4 minutes)...",
    run: async () => (await import('./code-mode-attacks.ts')).runCodeModeAttacksBench(),
  },
  {
    name: 'pipeline',
    progress: 'Pipeline overhead without I/O...',
    run: async () => {
      const { pipelineMarkdown, runPipelineBench } = await import('./pipeline.ts');
      return `## Pipeline overhead without I/O (log-mood schema, no-op execute)\n\n${pipelineMarkdown(await runPipelineBench())}`;
    },
  },
  {
    name: 'admission',
    progress: 'Admission cost per call...',
    run: async () => {
      const { runAdmissionBench } = await import('./pipeline.ts');
      return `## What admission adds to one uncontended call (no-op tool, loopback Redis)\n\n${await runAdmissionBench()}`;
    },
  },
  {
    name: 'idempotency',
    progress: 'What an idempotency key costs a write call...',
    run: async () => (await import('./idempotency.ts')).runIdempotencyBench(),
  },
  {
    name: 'faults',
    progress: 'Redis freeze recovery and key revocation on wrangler dev (about 2 minutes)...',
    run: async () => (await import('./faults.ts')).runFaultsBench(),
  },
  {
    name: 'deployed-latency',
    progress:
      'Every call at injected round trips (Neon 25 ms, Upstash 8 ms), beside its minimum and a bare handler, on wrangler dev (about 8 minutes)...',
    run: async () => (await import('./deployed-latency.ts')).runDeployedLatencyBench(),
  },
  {
    name: 'memory',
    progress: "The gateway isolate's heap after full collections over 20,000 calls on wrangler dev (bounded at 50 minutes)...",
    run: async () => (await import('./memory.ts')).runMemoryBench(),
  },
  {
    name: 'v8-flags',
    progress: 'What the local V8 flag costs cluster-by-similarity of 1,000 tasks, on wrangler dev (about 3 minutes)...',
    run: async () => (await import('./v8-flags.ts')).runV8FlagsBench(),
  },
  {
    name: 'semaphore',
    progress: 'Semaphore under saturation...',
    run: async () => (await import('./semaphore.ts')).runSemaphoreBench(),
  },
  {
    name: 'clustering',
    progress: 'Clustering next to ml-hclust...',
    run: async () => (await import('./clustering.ts')).runClusteringBench(),
  },
  {
    name: 'retrieval',
    progress: 'Retrieval with the default settings, offline embedder before and after...',
    run: async () => (await import('./retrieval.ts')).runRetrievalBench(),
  },
  {
    name: 'cycles',
    progress: 'Cycle detection...',
    run: async () => (await import('./cycles.ts')).runCyclesBench(),
  },
  {
    name: 'task-analysis',
    progress: 'Task-analysis tools against the Neon stand-in (about 9 minutes)...',
    run: async () => (await import('./task-analysis.ts')).runTaskAnalysisBench(),
  },
  {
    name: 'search-at-scale',
    progress: 'semantic-search over 100,000 tasks, exact and HNSW (the first run builds its database: 10-15 minutes)...',
    run: async () => (await import('./search-at-scale.ts')).runSearchAtScaleBench(),
  },
  {
    name: 'observability',
    progress: 'Observability reads over 100,000 executions (about 5 minutes)...',
    run: async () => (await import('./observability.ts')).runObservabilityBench(),
  },
  {
    name: 'answer-sizes',
    progress: 'Answer sizes per tool...',
    run: async () => {
      const { answerSizesMarkdown, measureAnswerSizes } = await import('./answer-sizes.ts');
      return `## Answer sizes: characters an agent reads back (bench/answer-sizes.ts)\n\n${answerSizesMarkdown(await measureAnswerSizes())}`;
    },
  },
  {
    name: 'bundles',
    progress: 'Bundle sizes (dry-run deploys)...',
    run: async () => (await import('./bundles.ts')).runBundlesBench(),
  },
  {
    name: 'cold-start',
    progress: 'Cold start in workerd, before and after (the Neon stand-in starts first)...',
    run: async () => (await import('./cold-start.ts')).runColdStartBench(),
  },
];

const RESULTS = new URL('RESULTS.md', import.meta.url);

/** Replaces the section with the same `## ` heading in `document` (or appends it). */
function replaceSection(document: string, section: string): string {
  const heading = section.slice(0, section.indexOf('\n'));
  const start = document.indexOf(`\n${heading}\n`);
  if (start < 0) return `${document.trimEnd()}\n\n${section.trimEnd()}\n`;
  const next = document.indexOf('\n## ', start + heading.length + 1);
  const rest = next < 0 ? '' : `\n${document.slice(next).trimStart()}`;
  return `${document.slice(0, start + 1)}${section.trimEnd()}\n${rest}`;
}

const names = process.argv.slice(2);
const unknown = names.filter((name) => !SECTIONS.some((section) => section.name === name));
if (unknown.length) {
  console.error(`Unknown bench section: ${unknown.join(', ')}. Sections: ${SECTIONS.map((s) => s.name).join(', ')}.`);
  process.exit(2);
}
const selected = names.length ? SECTIONS.filter((section) => names.includes(section.name)) : SECTIONS;

/** The 1-minute load average, which every figure here depends on: the machine may be shared. */
const load = () => loadAverage().toFixed(1);
const loadBefore = load();
/** Each section's markdown with what it ran under: the load average before and after it, and the stand-ins' injected round trips. */
const results: string[] = [];
for (const section of selected) {
  console.log(section.progress);
  const before = load();
  const markdown = await section.run();
  results.push(
    `${markdown.trimEnd()}\n\n_Load average ${before} when it started and ${load()} when it ended; round trips the environment injects into the stand-ins (LOCAL_NEON_RTT_MS, LOCAL_UPSTASH_RTT_MS; local/round-trip.ts): ${describeRoundTrips(BENCH_ROUND_TRIPS)}._`,
  );
}

const date = new Date().toISOString().slice(0, 10);
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, load average ${loadBefore} at the start and ${load()} at the end`;
let report: string;
if (names.length && existsSync(RESULTS)) {
  const stamp = (section: string) =>
    `${section}\n\n_Section rewritten by \`npm run bench -- ${names.join(' ')}\` on ${date}. Machine: ${machine}._`;
  report = results.reduce((document, section) => replaceSection(document, stamp(section)), readFileSync(RESULTS, 'utf8'));
} else {
  report = [`# Benchmark results\n\nWritten by \`npm run bench\` on ${date}. Machine: ${machine}.`, ...results].join('\n\n') + '\n';
}
writeFileSync(RESULTS, report);
console.log(results.join('\n\n'));
