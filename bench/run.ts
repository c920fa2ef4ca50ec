/**
 * `npm run bench`: runs every benchmark, prints the figures, and writes bench/RESULTS.md with the
 * machine and the date. Benchmarks are run on demand, never in the test suite.
 */
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { bundlesMarkdown, measureBundles } from './bundles.ts';
import { runClusteringBench } from './clustering.ts';
import { runCyclesBench } from './cycles.ts';
import { runFaultsBench } from './faults.ts';
import { runIdempotencyBench } from './idempotency.ts';
import { runObservabilityBench } from './observability.ts';
import { pipelineMarkdown, runAdmissionBench, runPipelineBench } from './pipeline.ts';
import { runRetrievalBench } from './retrieval.ts';
import { runSemaphoreBench } from './semaphore.ts';
import { runTaskAnalysisBench } from './task-analysis.ts';

const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const sections: string[] = [
  '# Benchmark results',
  '',
  `Written by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}. Machine: ${machine}.`,
];

console.log('Pipeline overhead without I/O...');
sections.push('', '## Pipeline overhead without I/O (log-mood schema, no-op execute)', '', pipelineMarkdown(await runPipelineBench()));

console.log('Admission cost per call...');
sections.push('', '## What admission adds to one uncontended call (no-op tool, loopback Redis)', '', await runAdmissionBench());

console.log('What an idempotency key costs a write call...');
sections.push('', await runIdempotencyBench());

console.log('Redis freeze recovery and key revocation on wrangler dev (about 2 minutes)...');
sections.push('', await runFaultsBench());

console.log('Semaphore under saturation...');
sections.push('', await runSemaphoreBench());

console.log('Clustering next to ml-hclust...');
sections.push('', await runClusteringBench());

console.log('Retrieval with the default settings, offline embedder before and after...');
sections.push('', await runRetrievalBench());

console.log('Cycle detection...');
sections.push('', await runCyclesBench());

console.log('Task-analysis tools against the Neon stand-in (about 9 minutes)...');
sections.push('', await runTaskAnalysisBench());

console.log('Observability reads over 100,000 executions (about 5 minutes)...');
sections.push('', await runObservabilityBench());

console.log('Bundle sizes (dry-run deploys)...');
sections.push('', '## Bundle sizes (`npm run deploy -- <tool-id> --dry-run`)', '', bundlesMarkdown(measureBundles()));

const report = sections.join('\n') + '\n';
writeFileSync(new URL('RESULTS.md', import.meta.url), report);
console.log(report);
