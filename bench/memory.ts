/**
 * The memory of the gateway's isolate under a long run of calls: the gateway under `wrangler dev`
 * (as `npm run dev` serves it) in front of the Neon stand-in and redis-server behind the Upstash
 * stand-in, over a small seeded project. 20,000 calls of eight kinds in turn (writes, reads, an MCP
 * tools/call, the catalog, readiness, and two refusals: bench/memory-calls.ts), 4 at a time. Every 2,000 calls, through
 * the inspector (bench/inspector.ts): the isolate's JavaScript heap as V8 reports it, then after a
 * full garbage collection (what the code keeps, not what waits to be collected); and the resident
 * memory (RSS, from /proc) of the workerd that runs the worker and of wrangler's own workerd in front
 * of it (none of this project's code runs there). The snapshots that force the collections add
 * their own native memory to workerd's RSS, so RSS is printed, not judged.
 *
 * workerd runs with V8's defaults and LOCAL_V8_FLAGS, as `npm run dev` runs it, or with the flags
 * of `--v8-flags` (`--v8-flags="--gc-global --optimize-for-size"`, FLAT_MEMORY_V8_FLAGS).
 * Warm-up is the first checkpoint (2,000 calls). The target is met when, at every later checkpoint,
 * the heap after the collection is within 10 % of its size at warm-up, and the largest heap seen
 * stays well under the 128 MB an isolate has on Workers; the run says so. The constructors whose
 * objects grew most between warm-up and the end (summed from the two snapshots) say what grew.
 *
 * Bounded: 20,000 calls or 50 minutes, whichever comes first; it stops what it started.
 * Run with `node --import ./local/wasm-imports.ts bench/memory.ts [--calls N] [--minutes M] [--v8-flags FLAGS]`;
 * `runMemoryBench()` returns the markdown section.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createProject, migrateDatabase } from '../local/database.ts';
import { startNeonStandIn } from '../local/neon-http.ts';
import { describeRoundTrips } from '../local/round-trip.ts';
import { seedCorpus } from '../local/seed.ts';
import { startRedisServer, startUpstashStandIn } from '../local/upstash-rest.ts';
import { freePort, startWranglerDev } from '../local/wrangler-dev.ts';
import { FLAT_MEMORY_V8_FLAGS, LOCAL_V8_FLAGS, localV8Flags } from '../local/wrangler-env.ts';
import { callKinds, firstTaskId, type CallKind } from './memory-calls.ts';
import { collectedHeap, heapUsage, inspect, type HeapSummary, type Inspector } from './inspector.ts';
import { BENCH_ROUND_TRIPS, injectRoundTrips, loadAverage } from './measure.ts';

/** The run's shape and bounds. */
export const MEMORY_BENCH = {
  calls: 20_000,
  every: 2_000,
  concurrency: 4,
  warmUpCheckpoints: 1,
  /** After warm-up, the heap after a full collection stays within this fraction of its size at warm-up. */
  flatWithin: 0.1,
  /** What an isolate has on Workers (MB, as Cloudflare states its limit). */
  isolateLimitMiB: 128,
  ceilingMs: 50 * 60_000,
  corpus: { documents: 10, tasks: 200 },
};

/** One checkpoint: calls so far, the isolate's heap before and after a full collection, both workerd's RSS, and how the answers went. */
interface Checkpoint {
  calls: number;
  /** The heap as V8 reported it before the collection: in use, and held. */
  usedMiB: number;
  heldMiB: number;
  /** After the full collection: what the code keeps, the heap V8 still holds, and ArrayBuffers' backing stores. */
  collectedMiB: number;
  collectedHeldMiB: number;
  backingMiB: number;
  workerMiB: number;
  proxyMiB: number;
  seconds: number;
  load: number;
  /** Answers other than the kind's expected one, so far. */
  unexpected: number;
}

const HEADING = "## Memory of the gateway's isolate: its heap after full collections over 20,000 calls (bench/memory.ts)";

/** Runs the calls and returns the markdown section. */
export async function runMemoryBench({
  calls = MEMORY_BENCH.calls,
  v8Flags = process.env.MINIFLARE_WORKERD_V8_FLAGS ?? '',
  ceilingMs = MEMORY_BENCH.ceilingMs,
} = {}): Promise<string> {
  const redis = await startRedisServer();
  if (!redis) return `${HEADING}\n\n_redis-server is not installed: not measured._\n`;
  const upstash = await startUpstashStandIn({ redisPort: redis.port, token: 'bench' });
  const neon = await startNeonStandIn();
  const inspectorPort = await freePort();
  let worker: Awaited<ReturnType<typeof startWranglerDev>> | undefined;
  let session: Inspector | undefined;
  try {
    await migrateDatabase(neon.connectionString);
    const { projectId, apiKey } = await createProject(neon.connectionString, 'Memory bench');
    await seedCorpus(neon.connectionString, projectId, MEMORY_BENCH.corpus);
    injectRoundTrips({ neon, upstash });
    worker = await startWranglerDev({
      vars: {
        DATABASE_URL: neon.connectionString,
        UPSTASH_REDIS_REST_URL: upstash.url,
        UPSTASH_REDIS_REST_TOKEN: upstash.token,
        // The calls are one key's, faster than a person's: the per-key limit would refuse most of them.
        RATE_LIMIT_PER_MINUTE: '1000000',
      },
      inspectorPort,
      v8Flags: localV8Flags(v8Flags),
    });
    const workerd = workerdPids(worker.pid);
    // One DevTools session for the whole run: wrangler's proxy admits one client at a time, and
    // refuses a new one until it has seen the previous one close.
    session = await inspect(inspectorPort);
    const kinds = callKinds(worker.url, apiKey, await firstTaskId(worker.url, apiKey), MEMORY_BENCH.corpus);

    const { checkpoints, summaries, unexpectedKinds } = await measure(kinds, session, workerd, { calls, ceilingMs });
    console.log(`  ${verdict(checkpoints, calls)}`);
    return memoryMarkdown({
      checkpoints,
      asked: calls,
      kinds: kinds.map((kind) => kind.name),
      summaries,
      v8Flags,
      unexpectedKinds,
      ceilingMs,
    });
  } finally {
    session?.close();
    worker?.stop();
    await upstash.close();
    await redis.stop();
    await neon.close();
  }
}

/** What a run measured: its checkpoints, the heap summaries of the warm-up and of the last checkpoint, and the unexpected answers. */
interface Measured {
  checkpoints: Checkpoint[];
  summaries: HeapSummary[];
  /** Unexpected answers per kind of call and status. */
  unexpectedKinds: Map<string, number>;
}

/**
 * Sends `calls` calls of `kinds` in turn, MEMORY_BENCH.concurrency at a time, with a checkpoint
 * every MEMORY_BENCH.every calls; stops at the first checkpoint past `ceilingMs`.
 */
async function measure(
  kinds: CallKind[],
  session: Inspector,
  workerd: { worker: number; proxy: number },
  { calls, ceilingMs }: { calls: number; ceilingMs: number },
): Promise<Measured> {
  const checkpoints: Checkpoint[] = [];
  const summaries: HeapSummary[] = [];
  const unexpectedKinds = new Map<string, number>();
  const started = performance.now();
  let sent = 0;
  while (sent < calls && performance.now() - started < ceilingMs) {
    const batch = Math.min(MEMORY_BENCH.every, calls - sent);
    await sendCalls(kinds, sent, batch, unexpectedKinds);
    sent += batch;
    // RSS first: the snapshot that forces the collection adds its own native memory.
    const [workerMiB, proxyMiB] = [rssMiB(workerd.worker), rssMiB(workerd.proxy)];
    const before = await heapUsage(session);
    // The snapshots of the warm-up and of the last checkpoint are summed, for what grew in between.
    const last = sent >= calls || performance.now() - started >= ceilingMs;
    const collected = await collectedHeap(session, { summarize: checkpoints.length < MEMORY_BENCH.warmUpCheckpoints || last });
    if (collected.summary) summaries.push(collected.summary);
    const unexpected = [...unexpectedKinds.values()].reduce((sum, count) => sum + count, 0);
    const checkpoint: Checkpoint = {
      calls: sent,
      usedMiB: before.usedMiB,
      heldMiB: before.heldMiB,
      collectedMiB: collected.usedMiB,
      collectedHeldMiB: collected.heldMiB,
      backingMiB: collected.backingMiB,
      workerMiB,
      proxyMiB,
      seconds: (performance.now() - started) / 1000,
      load: loadAverage(),
      unexpected,
    };
    checkpoints.push(checkpoint);
    console.log(
      `  ${sent.toLocaleString('en')} calls: JS heap ${before.usedMiB.toFixed(1)} MiB in use, ${collected.usedMiB.toFixed(1)} after a full collection; workerd RSS ${checkpoint.workerMiB.toFixed(0)} MiB (wrangler's ${checkpoint.proxyMiB.toFixed(0)}); load ${checkpoint.load.toFixed(1)} (${unexpected} unexpected answers)`,
    );
  }
  return { checkpoints, summaries, unexpectedKinds };
}

/**
 * Sends calls `from` to `from + count - 1` (call i of kind i mod the number of kinds),
 * MEMORY_BENCH.concurrency at a time, counting each unexpected answer in `unexpectedKinds` under
 * its kind and status.
 */
async function sendCalls(kinds: CallKind[], from: number, count: number, unexpectedKinds: Map<string, number>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: MEMORY_BENCH.concurrency }, async () => {
      while (next < count) {
        const kind = kinds[(from + next) % kinds.length]!;
        const response = await kind.send(from + next++);
        if (!(await kind.expected(response))) {
          const what = `${kind.name}: ${response.status}`;
          unexpectedKinds.set(what, (unexpectedKinds.get(what) ?? 0) + 1);
        }
      }
    }),
  );
}

/**
 * The two workerd processes in wrangler's process group: the one that runs the worker (the only
 * one started with an inspector) and wrangler's proxy in front of it.
 */
function workerdPids(processGroup: number): { worker: number; proxy: number } {
  const found: { worker?: number; proxy?: number } = {};
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // pid (comm) state ppid pgrp ...
      const match = /^\d+ \((.*)\) \S+ \d+ (\d+)/.exec(readFileSync(`/proc/${entry}/stat`, 'utf8'));
      if (match?.[1] !== 'workerd' || Number(match[2]) !== processGroup) continue;
      const inspected = readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('--inspector-addr');
      found[inspected ? 'worker' : 'proxy'] = Number(entry);
    } catch {
      // the process ended while listed
    }
  }
  if (!found.worker || !found.proxy)
    throw new Error(`Expected two workerd processes in process group ${processGroup}, found ${JSON.stringify(found)}`);
  return found as { worker: number; proxy: number };
}

function rssMiB(pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kib) / 1024;
}

interface MemoryRun {
  checkpoints: Checkpoint[];
  ceilingMs: number;
  unexpectedKinds: Map<string, number>;
  v8Flags: string;
  asked: number;
  kinds: string[];
  /** The heap snapshots of the warm-up and of the last checkpoint, summed per constructor. */
  summaries: HeapSummary[];
}

const percent = (from: number, to: number) => `${to >= from ? '+' : ''}${(((to - from) / from) * 100).toFixed(1)} %`;

/** Whether the run met the target, in one line that says so (not judged when the time bound cut it short). */
function verdict(checkpoints: Checkpoint[], asked: number): string {
  const warm = checkpoints[MEMORY_BENCH.warmUpCheckpoints - 1];
  const after = checkpoints.slice(MEMORY_BENCH.warmUpCheckpoints);
  if (!warm || !after.length) return 'Target NOT JUDGED: no checkpoint after warm-up.';
  const drift = Math.max(...after.map((c) => Math.abs(c.collectedMiB - warm.collectedMiB) / warm.collectedMiB));
  const peak = Math.max(...checkpoints.map((c) => c.collectedMiB + c.backingMiB));
  const reached = after.at(-1)!.calls;
  const status =
    reached < asked
      ? `NOT JUDGED (the time bound stopped it at ${reached.toLocaleString('en')} of ${asked.toLocaleString('en')} calls)`
      : drift <= MEMORY_BENCH.flatWithin && peak < MEMORY_BENCH.isolateLimitMiB / 2
        ? 'MET'
        : 'NOT MET';
  return `Target ${status}: after warm-up (${warm.calls.toLocaleString('en')} calls), the heap after a full collection stayed within ${(drift * 100).toFixed(1)} % of its ${warm.collectedMiB.toFixed(1)} MiB (target: ${MEMORY_BENCH.flatWithin * 100} %); at its largest, with its ArrayBuffers' backing stores, it was ${peak.toFixed(1)} MiB, ${((peak / MEMORY_BENCH.isolateLimitMiB) * 100).toFixed(0)} % of the ${MEMORY_BENCH.isolateLimitMiB} MB an isolate has on Workers (target: under half).`;
}

function memoryMarkdown({ checkpoints, asked, kinds, summaries, v8Flags, unexpectedKinds, ceilingMs }: MemoryRun): string {
  const warm = checkpoints[MEMORY_BENCH.warmUpCheckpoints - 1];
  const last = checkpoints.at(-1);
  const flags = `${v8Flags ? `\`${v8Flags}\`` : "V8's defaults"} and \`${LOCAL_V8_FLAGS}\` (LOCAL_V8_FLAGS, which every local workerd runs with)${v8Flags === FLAT_MEMORY_V8_FLAGS ? ' (FLAT_MEMORY_V8_FLAGS, which `npm run dev` does not set)' : v8Flags ? '' : ', as `npm run dev` runs it'}`;
  const lines = [
    HEADING,
    '',
    `The gateway under \`wrangler dev\` (as \`npm run dev\` serves it) over the Neon stand-in and redis-server behind the Upstash stand-in (round trips injected: ${describeRoundTrips(BENCH_ROUND_TRIPS)}), a project of ${MEMORY_BENCH.corpus.documents} documents and ${MEMORY_BENCH.corpus.tasks} tasks, the per-key rate limit lifted. ${asked.toLocaleString('en')} calls asked (bounded at ${ceilingMs / 60_000} minutes), ${MEMORY_BENCH.concurrency} at a time, of ${kinds.length} kinds in turn: ${kinds.join('; ')}. Every ${MEMORY_BENCH.every.toLocaleString('en')} calls, through the inspector: the worker isolate's JavaScript heap as V8 reports it (\`Runtime.getHeapUsage\`: in use / held), then after a full garbage collection (the one V8 runs before a heap snapshot: workerd's inspector does not answer \`HeapProfiler.collectGarbage\`), and the resident memory (RSS) of the workerd that runs the worker and of the one wrangler runs in front of it (which the snapshots swell with their own native memory, so it is printed, not judged). workerd's V8 flags: ${flags}. Warm-up: the first checkpoint. Target: after warm-up, the heap after the collection within ${MEMORY_BENCH.flatWithin * 100} % of its size at warm-up, and the largest heap well under the ${MEMORY_BENCH.isolateLimitMiB} MB an isolate has on Workers (under half).`,
    '',
    "| calls | JS heap in use / held, MiB | after a full collection: in use / held, MiB | ArrayBuffers' backing stores, MiB | workerd RSS (the worker / wrangler's), MiB | elapsed, s | load | unexpected answers so far |",
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...checkpoints.map(
      (c) =>
        `| ${c.calls.toLocaleString('en')} | ${c.usedMiB.toFixed(1)} / ${c.heldMiB.toFixed(1)} | ${c.collectedMiB.toFixed(1)} / ${c.collectedHeldMiB.toFixed(1)} | ${c.backingMiB.toFixed(1)} | ${c.workerMiB.toFixed(0)} / ${c.proxyMiB.toFixed(0)} | ${c.seconds.toFixed(0)} | ${c.load.toFixed(1)} | ${c.unexpected} |`,
    ),
    '',
  ];
  if (!warm || !last) return [...lines, '_No checkpoint reached._'].join('\n');
  lines.push(
    `**${verdict(checkpoints, asked)}**`,
    '',
    `From ${warm.calls.toLocaleString('en')} to ${last.calls.toLocaleString('en')} calls: the heap after a full collection ${percent(warm.collectedMiB, last.collectedMiB)}, the worker's workerd RSS ${percent(warm.workerMiB, last.workerMiB)}, wrangler's ${percent(warm.proxyMiB, last.proxyMiB)}. Before the collections, V8 held up to ${Math.max(...checkpoints.map((c) => c.heldMiB)).toFixed(1)} MiB of heap: garbage not collected yet (V8 grows its heap by its own heuristics before collecting; what the code keeps is the heap after a collection).`,
    '',
    `Unexpected answers: ${unexpectedKinds.size ? [...unexpectedKinds].map(([what, count]) => `${what} (${count})`).join('; ') : 'none'}.`,
  );
  if (summaries.length === 2) {
    const [before, after] = summaries as [HeapSummary, HeapSummary];
    const grown = [...after]
      .map(([name, { count, bytes }]) => ({
        name,
        count,
        bytes,
        countBefore: before.get(name)?.count ?? 0,
        bytesBefore: before.get(name)?.bytes ?? 0,
      }))
      .sort((a, b) => b.bytes - b.bytesBefore - (a.bytes - a.bytesBefore))
      .slice(0, 10);
    const total = (summary: HeapSummary) => [...summary.values()].reduce((sum, { bytes }) => sum + bytes, 0) / 2 ** 20;
    lines.push(
      '',
      `The heap snapshots at ${warm.calls.toLocaleString('en')} and ${last.calls.toLocaleString('en')} calls: ${total(before).toFixed(1)} → ${total(after).toFixed(1)} MiB of live objects. The constructors (or kinds of heap entry) whose objects grew most, by their own size:`,
      '',
      '| constructor | objects, first | last | own size first, KiB | last, KiB |',
      '|---|---:|---:|---:|---:|',
      ...grown.map(
        (g) =>
          `| ${g.name || '(anonymous)'} | ${g.countBefore} | ${g.count} | ${(g.bytesBefore / 1024).toFixed(1)} | ${(g.bytes / 1024).toFixed(1)} |`,
      ),
    );
  }
  return lines.join('\n');
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      calls: { type: 'string', default: String(MEMORY_BENCH.calls) },
      'v8-flags': { type: 'string' },
      minutes: { type: 'string', default: String(MEMORY_BENCH.ceilingMs / 60_000) },
    },
  });
  console.log(
    await runMemoryBench({
      calls: Number(values.calls),
      v8Flags: values['v8-flags'],
      ceilingMs: Number(values.minutes) * 60_000,
    }),
  );
}
