/**
 * Cold start in workerd: a fresh workerd loads a worker's deployed bundle and answers its first
 * request, for a tool's own worker (log-mood) and the gateway, built from this checkout and from
 * {@link COLD_START_BASELINE}.
 *
 * Each sample runs `workerd serve` itself, the binary wrangler and Miniflare run, on a config of
 * one worker (the bundle and the modules uploaded with it) and one socket, with no Miniflare in
 * between: Miniflare's own work in Node (building the config of its helper workers, serialising the
 * script into it) took about 0.3 s before workerd started and grew with the script's size, so it
 * was counted as the bundle's. workerd loads the worker, running its module scope, before it
 * listens; it reports its port on a control descriptor ("ready"), then answers `GET /health`, which
 * does no I/O. The time from spawning workerd to the first answer includes the process's own start,
 * so the same is measured for a worker of one line (the floor), and what the bundle adds is the
 * difference. On Linux the CPU time workerd spent until its first answer (all its threads, from
 * /proc) is measured too: on a machine busy with other work it waits less on the others than the
 * elapsed time does.
 *
 * Two more measures say where a start goes:
 * - each bundle of this checkout with its code loaded but not run (the whole script inside a
 *   function never called: V8 reads all of it, runs none of it), which is what the size alone costs;
 * - the gateway's first MCP answer (`initialize`, authorised by an API key of a project in the Neon
 *   stand-in), from spawning workerd and from when it was ready: the gateway loads the MCP SDK on
 *   the first MCP request, so this is where that cost went.
 *
 * Samples of all rows are interleaved, so that load on the machine falls on all of them alike.
 *
 * Run with `node bench/cold-start.ts [--baseline <commit>] [--samples <n>]`; `runColdStartBench()`
 * returns the markdown section for RESULTS.md.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { extractCommit, measureBundles, type BundleSize } from './bundles.ts';
import { createProject, migrateDatabase } from '../local/database.ts';
import { startNeonStandIn } from '../local/neon-http.ts';
import { injectRoundTrips } from './measure.ts';

/** The commit compared with: the last one before the gateway loaded the MCP SDK on first use. */
export const COLD_START_BASELINE = '6477440d0fe7606044e1e2f45035e7b180eb5acb';

const WORKERS = ['log-mood', 'gateway'];
const COMPATIBILITY_DATE = '2026-10-01';

/** The workerd binary of the `workerd` package (the one wrangler and Miniflare run). */
const WORKERD: string = createRequire(import.meta.url)('workerd').default;

/** The first MCP message every client sends (2025-11-25, answered statelessly as JSON). */
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'cold-start-bench', version: '1.0.0' } },
};

export interface Sample {
  /** From spawning workerd until it listens (the worker loaded, its module scope run). */
  readyMs: number;
  /** From spawning workerd until the first answer. */
  totalMs: number;
  /** CPU time workerd used until the first answer, all threads (Linux only). */
  cpuMs?: number;
  /** CPU time workerd used until it was ready (Linux only). */
  cpuReadyMs?: number;
}

/** What a sample asks once workerd listens. */
export type FirstRequest = (origin: string, signal: AbortSignal) => Promise<Response>;

const health: FirstRequest = (origin, signal) => fetch(`${origin}/health`, { signal });

/** CPU time a process has used so far, all threads, in ms (the scheduler's own count, in ns); none where there is no /proc. */
function cpuTimeMs(pid: number): number | undefined {
  if (!existsSync(`/proc/${pid}/task`)) return undefined;
  let ns = 0;
  for (const thread of readdirSync(`/proc/${pid}/task`))
    ns += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, 'utf8').split(' ')[0]);
  return ns / 1e6;
}

/**
 * Writes a workerd config (Cap'n Proto text) serving `script` and the modules uploaded with it (the
 * .wasm files wrangler writes next to it) on 127.0.0.1, with `bindings` as text bindings, into a
 * folder of its own under `scratch`; returns the config's path.
 */
export function writeConfig(scratch: string, name: string, script: string, bindings: Record<string, string>): string {
  const folder = join(scratch, name);
  mkdirSync(folder);
  const modules: string[] = [];
  for (const file of [basename(script), ...readdirSync(dirname(script)).filter((file) => file.endsWith('.wasm'))]) {
    copyFileSync(join(dirname(script), file), join(folder, file));
    modules.push(`(name = ${JSON.stringify(file)}, ${file.endsWith('.wasm') ? 'wasm' : 'esModule'} = embed ${JSON.stringify(file)})`);
  }
  const texts = Object.entries(bindings).map(([key, value]) => `(name = ${JSON.stringify(key)}, text = ${JSON.stringify(value)})`);
  const config = join(folder, 'config.capnp');
  writeFileSync(
    config,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "worker", worker = .worker),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "worker")],
);
const worker :Workerd.Worker = (
  modules = [${modules.join(', ')}],
  bindings = [${texts.join(', ')}],
  compatibilityDate = ${JSON.stringify(COMPATIBILITY_DATE)},
  globalOutbound = "internet",
);
`,
  );
  return config;
}

/**
 * The same bundle with its code loaded but not run: the script inside a function that is never
 * called, its imports (the `import … from"…";` statements of esbuild's output) kept at the top,
 * its export statement replaced by a worker of one line. Only the minified form (no space before the
 * quote) is an import of the bundle: module sources held in strings (code mode's sandbox modules,
 * which import `./agent.js`) are written with a space and stay in their strings.
 */
function codeOnly(script: string, folder: string): string {
  mkdirSync(folder);
  const imports: string[] = [];
  const body = readFileSync(script, 'utf8')
    .replace(/\bimport\s*(?:\{[^}]*\}|[\w$]+)\s*from"[^"\n]+";/g, (statement) => (imports.push(statement), ''))
    .replace(/\bexport\s*\{[^}]*\};?/g, '');
  for (const file of readdirSync(dirname(script)).filter((file) => file.endsWith('.wasm')))
    copyFileSync(join(dirname(script), file), join(folder, file));
  const copy = join(folder, basename(script));
  writeFileSync(
    copy,
    `${imports.join('\n')}\nfunction notRun() {\n${body}\n}\nglobalThis.notRun = notRun;\nexport default { fetch: () => new Response('ok') };\n`,
  );
  return copy;
}

/** How long a sample may take before it is given up: a ceiling for a hung workerd, not a measure. */
const SAMPLE_TIMEOUT_MS = 60_000;

/** Spawns workerd on `config`, asks `first` once it listens, and stops it. */
export async function coldStart(config: string, first: FirstRequest): Promise<Sample> {
  const startedAt = performance.now();
  const workerd = spawn(WORKERD, ['serve', config, '--control-fd=3'], { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  let stderr = '';
  workerd.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let control = '';
      (workerd.stdio[3] as Readable).on('data', (chunk: Buffer) => {
        control += chunk;
        for (const line of control.split('\n')) {
          const message = line.startsWith('{') ? (JSON.parse(line) as { event?: string; port?: number }) : undefined;
          if (message?.event === 'listen') resolve(message.port!);
        }
      });
      workerd.once('exit', (code) => reject(new Error(`workerd exited (${code}) before it listened:\n${stderr}`)));
      setTimeout(
        () => reject(new Error(`workerd did not listen within ${SAMPLE_TIMEOUT_MS} ms (${config}):\n${stderr}`)),
        SAMPLE_TIMEOUT_MS,
      ).unref();
    });
    const readyMs = performance.now() - startedAt;
    const cpuReadyMs = cpuTimeMs(workerd.pid!);
    const response = await first(`http://127.0.0.1:${port}`, AbortSignal.timeout(SAMPLE_TIMEOUT_MS));
    const text = await response.text();
    const totalMs = performance.now() - startedAt;
    if (!response.ok) throw new Error(`The first request answered ${response.status} (${config}): ${text.slice(0, 500)}\n${stderr}`);
    const cpuMs = cpuTimeMs(workerd.pid!);
    return { readyMs, totalMs, ...(cpuMs !== undefined && { cpuMs }), ...(cpuReadyMs !== undefined && { cpuReadyMs }) };
  } finally {
    if (workerd.exitCode === null && workerd.signalCode === null) {
      const exited = once(workerd, 'exit');
      workerd.kill('SIGKILL');
      await exited;
    }
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** One row of the bench: a config and what its samples ask first. */
interface Row {
  label: string;
  size?: BundleSize;
  config: string;
  first: FirstRequest;
  /** The floor's row, which this one's median is compared with (none for the floor itself). */
  against?: number;
}

/** Measures the floor and each worker, before and after, `samples` times each, interleaved. */
export async function runColdStartBench({ baseline = COLD_START_BASELINE, samples = 15 } = {}): Promise<string> {
  const old = extractCommit(baseline);
  const scratch = mkdtempSync(join(tmpdir(), 'edge-tools-cold-'));
  const neon = await startNeonStandIn();
  try {
    await migrateDatabase(neon.connectionString);
    const { apiKey } = await createProject(neon.connectionString, 'Cold start');
    injectRoundTrips({ neon });
    const bindings = { DATABASE_URL: neon.connectionString };
    const initialize: FirstRequest = (origin, signal) =>
      fetch(`${origin}/mcp`, {
        method: 'POST',
        signal,
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(INITIALIZE),
      });

    const floorFolder = join(scratch, 'floor');
    mkdirSync(floorFolder);
    const floor = join(floorFolder, 'floor.js');
    writeFileSync(floor, "export default { fetch: () => new Response('ok') };\n");
    const rows: Row[] = [{ label: 'floor (a worker of one line)', config: writeConfig(scratch, 'floor-config', floor, {}), first: health }];
    const before = await measureBundles(old.root, WORKERS);
    const after = await measureBundles(undefined, WORKERS);
    for (const worker of WORKERS) {
      for (const [when, sizes] of [
        ['before', before],
        ['after', after],
      ] as const) {
        const size = sizes.find((entry) => entry.worker === worker)!;
        rows.push({
          label: `${worker}, ${when}`,
          size,
          config: writeConfig(scratch, `${worker}-${when}`, size.script, bindings),
          first: health,
          against: 0,
        });
      }
      const size = after.find((entry) => entry.worker === worker)!;
      const script = codeOnly(size.script, join(scratch, `${worker}-code-only`));
      rows.push({
        label: `${worker}, after: its code loaded, not run`,
        size,
        config: writeConfig(scratch, `${worker}-code-only-config`, script, {}),
        first: health,
        against: 0,
      });
    }
    const firstMcp = rows.length;
    for (const when of ['before', 'after']) {
      const start = rows.find((row) => row.label === `gateway, ${when}`)!;
      rows.push({ label: `gateway, ${when}: first MCP answer (initialize)`, size: start.size, config: start.config, first: initialize });
    }

    await coldStart(rows[0]!.config, health); // workerd's binary read once, unreported
    const results = rows.map(() => [] as Sample[]);
    for (let round = 0; round < samples; round++) {
      for (const [index, row] of rows.entries()) results[index]!.push(await coldStart(row.config, row.first));
    }
    return coldStartReport(rows, results, { samples, baseline, firstMcp });
  } finally {
    await neon.close();
    rmSync(scratch, { recursive: true, force: true });
    old.dispose();
  }
}

/** The section of RESULTS.md: the medians of every row's samples, starts first, then the first MCP answers (rows from `firstMcp` on). */
function coldStartReport(
  rows: Row[],
  results: Sample[][],
  { samples, baseline, firstMcp }: { samples: number; baseline: string; firstMcp: number },
): string {
  const medianOf = (index: number, measure: (sample: Sample) => number | undefined) => {
    const values = results[index]!.map(measure).filter((value) => value !== undefined);
    return values.length === samples ? median(values) : undefined;
  };
  const shown = (value: number | undefined) => (value === undefined ? '–' : value.toFixed(0));
  const difference = (index: number, against: number | undefined, measure: (sample: Sample) => number | undefined) => {
    const value = medianOf(index, measure);
    const base = against === undefined ? undefined : medianOf(against, measure);
    return shown(value !== undefined && base !== undefined ? value - base : undefined);
  };
  const startLine = (row: Row, index: number) => {
    const size = row.size ? `${row.size.kib} / ${row.size.gzipKib}` : '–';
    const total = (sample: Sample) => sample.totalMs;
    const cpu = (sample: Sample) => sample.cpuMs;
    return `| ${row.label} | ${size} | ${shown(medianOf(index, (sample) => sample.readyMs))} | ${shown(medianOf(index, total))} | ${difference(index, row.against, total)} | ${shown(medianOf(index, cpu))} | ${difference(index, row.against, cpu)} |`;
  };
  /** A first MCP answer: what it took after workerd was ready, within each sample. */
  const mcpLine = (row: Row, index: number) => {
    const afterReady = (sample: Sample) => sample.totalMs - sample.readyMs;
    const cpuAfterReady = (sample: Sample) =>
      sample.cpuMs !== undefined && sample.cpuReadyMs !== undefined ? sample.cpuMs - sample.cpuReadyMs : undefined;
    return `| ${row.label} | ${shown(medianOf(index, (sample) => sample.readyMs))} | ${shown(medianOf(index, (sample) => sample.totalMs))} | ${shown(medianOf(index, afterReady))} | ${shown(medianOf(index, (sample) => sample.cpuMs))} | ${shown(medianOf(index, cpuAfterReady))} |`;
  };
  return [
    '## Cold start in workerd (bench/cold-start.ts)',
    '',
    `Each sample spawns \`workerd serve\` (the binary wrangler runs) on a config of one worker, the dry-run bundle, and one socket on 127.0.0.1, and asks its first request once workerd listens: \`GET /health\` (no I/O) for the starts, \`POST /mcp\` \`initialize\` with an API key (checked against the Neon stand-in) for the first MCP answers. Medians of ${samples} samples per row, all rows interleaved. Before: commit ${baseline.slice(0, 7)}. "Ready" is when workerd listens, after it has loaded the worker and run its module scope. What the bundle adds = the row's median minus the floor's (workerd's own start), in elapsed time and in workerd's CPU time (all its threads, until the answer). "Its code loaded, not run": the same bundle inside a function never called, so V8 reads all of it and runs none of it: what its size alone costs.`,
    '',
    '| worker | bundle KiB (minified / gzip) | start to ready, ms | start to first answer, ms | added by the bundle, ms | workerd CPU until the answer, ms | CPU added by the bundle, ms |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...rows.slice(0, firstMcp).map((row, index) => startLine(row, index)),
    '',
    "The gateway's first MCP answer after a cold start, and what it took once workerd was ready (within each sample): the API key's check against the Neon stand-in, and, after, loading the MCP server and its SDK:",
    '',
    '| request | start to ready, ms | start to the MCP answer, ms | ready to the MCP answer, ms | workerd CPU until the answer, ms | workerd CPU from ready to the answer, ms |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.slice(firstMcp).map((row, index) => mcpLine(row, firstMcp + index)),
  ].join('\n');
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { baseline: { type: 'string', default: COLD_START_BASELINE }, samples: { type: 'string', default: '15' } },
  });
  console.log(await runColdStartBench({ baseline: values.baseline, samples: Number(values.samples) }));
}
