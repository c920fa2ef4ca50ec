/**
 * workerd's memory under a long run of calls: the gateway under `wrangler dev` (as `npm run dev`
 * serves it) in front of the Neon stand-in and redis-server behind the Upstash stand-in, over a
 * small seeded project. 20,000 calls of five kinds in turn (log-mood writes, semantic-search,
 * get-document-context, the catalog, readiness), 4 at a time; workerd's resident memory (RSS, from
 * /proc) every 2,000 calls. Flat means the last checkpoint within 20 % of the first one after
 * warm-up. With `--heap`, a heap snapshot of the worker's isolate (DevTools protocol, through
 * workerd's inspector) at the first and the last checkpoint, and the constructors whose retained
 * count grew most in between.
 *
 * Bounded: 20,000 calls or 30 minutes, whichever comes first; it stops the stack by itself.
 * Run with `node bench/memory.ts [--calls N] [--heap]`; `runMemoryBench()` returns the markdown section.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { generateCorpus } from '../local/corpus.ts';
import { createProject, migrateDatabase } from '../local/database.ts';
import { startNeonStandIn } from '../local/neon-http.ts';
import { seedCorpus } from '../local/seed.ts';
import { startRedisServer, startUpstashStandIn } from '../local/upstash-rest.ts';
import { freePort, startWranglerDev } from '../local/wrangler-dev.ts';

/** The run's shape and bounds. */
export const MEMORY_BENCH = { calls: 20_000, every: 2_000, concurrency: 4, warmUpCheckpoints: 1, flatWithin: 0.2, ceilingMs: 30 * 60_000, corpus: { documents: 10, tasks: 200 } };

/** One checkpoint: calls so far, workerd's RSS, and how the answers went. */
interface Checkpoint {
  calls: number;
  rssMiB: number;
  /** The worker isolate's JavaScript heap in use. */
  heapMiB: number;
  seconds: number;
  failures: number;
}

/** Runs the calls and returns the markdown section. */
export async function runMemoryBench({ calls = MEMORY_BENCH.calls, heap = false } = {}): Promise<string> {
  const redis = await startRedisServer();
  if (!redis) return '## Memory of workerd under a long run (bench/memory.ts)\n\n_redis-server is not installed: not measured._\n';
  const upstash = await startUpstashStandIn({ redisPort: redis.port, token: 'bench' });
  const neon = await startNeonStandIn();
  const inspectorPort = await freePort();
  let worker: Awaited<ReturnType<typeof startWranglerDev>> | undefined;
  try {
    await migrateDatabase(neon.connectionString);
    const { projectId, apiKey } = await createProject(neon.connectionString, 'Memory bench');
    await seedCorpus(neon.connectionString, projectId, MEMORY_BENCH.corpus);
    worker = await startWranglerDev({
      vars: { DATABASE_URL: neon.connectionString, UPSTASH_REDIS_REST_URL: upstash.url, UPSTASH_REDIS_REST_TOKEN: upstash.token },
      inspectorPort,
    });
    const workerd = workerdPid(worker.pid);
    const taskId = await firstTaskId(worker.url, apiKey);
    const call = callMix(worker.url, apiKey, taskId);

    const checkpoints: Checkpoint[] = [];
    const snapshots: Map<string, number>[] = [];
    const started = performance.now();
    let sent = 0;
    let failures = 0;
    while (sent < calls && performance.now() - started < MEMORY_BENCH.ceilingMs) {
      const batch = Math.min(MEMORY_BENCH.every, calls - sent);
      let next = 0;
      await Promise.all(
        Array.from({ length: MEMORY_BENCH.concurrency }, async () => {
          while (next < batch) {
            const index = sent + next++;
            if (!(await call(index))) failures++;
          }
        }),
      );
      sent += batch;
      checkpoints.push({ calls: sent, rssMiB: rssMiB(workerd), heapMiB: await heapUsedMiB(inspectorPort), seconds: (performance.now() - started) / 1000, failures });
      const { rssMiB: rss, heapMiB: heap } = checkpoints.at(-1)!;
      console.log(`  ${sent.toLocaleString('en')} calls: workerd RSS ${rss.toFixed(0)} MiB, JS heap ${heap.toFixed(1)} MiB (${failures} failed)`);
      if (heap && (checkpoints.length === MEMORY_BENCH.warmUpCheckpoints || sent >= calls)) snapshots.push(await heapCounts(inspectorPort));
    }
    return memoryMarkdown(checkpoints, calls, snapshots);
  } finally {
    worker?.stop();
    await upstash.close();
    await redis.stop();
    await neon.close();
  }
}

/** The five kinds of call, the i-th call being of kind i mod 5; each resolves with whether it succeeded. */
function callMix(base: string, apiKey: string, taskId: string): (index: number) => Promise<boolean> {
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const queries = generateCorpus(MEMORY_BENCH.corpus).map((document) => document.title);
  const tool = (id: string, input: unknown) => fetch(`${base}/tools/${id}`, { method: 'POST', headers, body: JSON.stringify(input) });
  const kinds: ((index: number) => Promise<Response>)[] = [
    // Each entry its own minute, so none collides with another.
    (i) => tool('log-mood', { user_id: 'bench', mood: 'happy', energy_level: 1 + (i % 10), timestamp: new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString().replace('.000', '') }),
    (i) => tool('semantic-search', { query: queries[i % queries.length], limit: 5 }),
    () => tool('get-document-context', { task_ids: [taskId] }),
    () => fetch(`${base}/tools`),
    () => fetch(`${base}/health/ready`),
  ];
  return async (index) => {
    const response = await kinds[index % kinds.length]!(index);
    await response.arrayBuffer();
    return response.ok;
  };
}

async function firstTaskId(base: string, apiKey: string): Promise<string> {
  const response = await fetch(`${base}/tools/semantic-search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'plan', limit: 1 }),
  });
  const answer = (await response.json()) as { data?: { results?: { task_id: string }[] } };
  const id = answer.data?.results?.[0]?.task_id;
  if (!id) throw new Error(`semantic-search found no task: ${JSON.stringify(answer)}`);
  return id;
}

/**
 * The workerd process that runs the worker, in wrangler's process group. wrangler runs two: one
 * for its own proxy in front of the worker, and this one, the only one started with an inspector.
 */
function workerdPid(processGroup: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // pid (comm) state ppid pgrp ...
      const match = /^\d+ \((.*)\) \S+ \d+ (\d+)/.exec(readFileSync(`/proc/${entry}/stat`, 'utf8'));
      const inspected = readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('--inspector-addr');
      if (match?.[1] === 'workerd' && Number(match[2]) === processGroup && inspected) return Number(entry);
    } catch {
      // the process ended while listed
    }
  }
  throw new Error(`No workerd process running the worker in process group ${processGroup}`);
}

function rssMiB(pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kib) / 1024;
}

/** A DevTools protocol session with the worker's isolate, through wrangler's inspector proxy. */
async function inspect(inspectorPort: number) {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json()) as { webSocketDebuggerUrl: string }[];
  // The proxy admits a client that names a loopback Origin (undici's WebSocket takes headers).
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl, { headers: { origin: 'http://127.0.0.1' } } as unknown as string[]);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  let id = 0;
  const pending = new Map<number, (result: unknown) => void>();
  const listeners = new Map<string, (params: unknown) => void>();
  socket.onmessage = (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; method?: string; params?: unknown; result?: unknown };
    if (message.method) listeners.get(message.method)?.(message.params);
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  };
  return {
    send: <T>(method: string) =>
      new Promise<T>((resolve) => {
        pending.set(++id, resolve as (result: unknown) => void);
        socket.send(JSON.stringify({ id, method }));
      }),
    on: (method: string, listener: (params: unknown) => void) => void listeners.set(method, listener),
    close: () => socket.close(),
  };
}

/** The isolate's JavaScript heap in use, MiB. */
async function heapUsedMiB(inspectorPort: number): Promise<number> {
  const session = await inspect(inspectorPort);
  try {
    return (await session.send<{ usedSize: number }>('Runtime.getHeapUsage')).usedSize / 2 ** 20;
  } finally {
    session.close();
  }
}

/** A heap snapshot of the isolate (V8 collects garbage before taking one): objects counted per constructor name. */
async function heapCounts(inspectorPort: number): Promise<Map<string, number>> {
  const session = await inspect(inspectorPort);
  const chunks: string[] = [];
  session.on('HeapProfiler.addHeapSnapshotChunk', (params) => chunks.push((params as { chunk: string }).chunk));
  try {
    await session.send('HeapProfiler.enable');
    await session.send('HeapProfiler.takeHeapSnapshot');
  } finally {
    session.close();
  }
  const snapshot = JSON.parse(chunks.join('')) as { snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }; nodes: number[]; strings: string[] };
  const fields = snapshot.snapshot.meta.node_fields;
  const [typeIndex, nameIndex] = [fields.indexOf('type'), fields.indexOf('name')];
  const types = snapshot.snapshot.meta.node_types[0];
  const counts = new Map<string, number>();
  for (let at = 0; at < snapshot.nodes.length; at += fields.length) {
    const type = types[snapshot.nodes[at + typeIndex]!];
    if (type !== 'object' && type !== 'closure') continue;
    const name = `${type === 'closure' ? 'closure ' : ''}${snapshot.strings[snapshot.nodes[at + nameIndex]!]}`;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

function memoryMarkdown(checkpoints: Checkpoint[], asked: number, snapshots: Map<string, number>[]): string {
  const warm = checkpoints[MEMORY_BENCH.warmUpCheckpoints - 1];
  const last = checkpoints.at(-1);
  const growth = warm && last ? (last.rssMiB - warm.rssMiB) / warm.rssMiB : 0;
  const lines = [
    '## Memory of workerd under a long run (bench/memory.ts)',
    '',
    `The gateway under \`wrangler dev\` (as \`npm run dev\` serves it) over the Neon stand-in and redis-server behind the Upstash stand-in, a project of ${MEMORY_BENCH.corpus.documents} documents and ${MEMORY_BENCH.corpus.tasks} tasks. ${asked.toLocaleString('en')} calls asked, ${MEMORY_BENCH.concurrency} at a time, in turn: log-mood (a new entry each), semantic-search, get-document-context, \`GET /tools\`, \`GET /health/ready\`. workerd's resident memory (RSS) every ${MEMORY_BENCH.every.toLocaleString('en')} calls. Target: flat within ${MEMORY_BENCH.flatWithin * 100} % after warm-up (the first checkpoint).`,
    '',
    '| calls | workerd RSS, MiB | JS heap in use, MiB | elapsed, s | failed calls so far |',
    '|---:|---:|---:|---:|---:|',
    ...checkpoints.map((c) => `| ${c.calls.toLocaleString('en')} | ${c.rssMiB.toFixed(0)} | ${c.heapMiB.toFixed(1)} | ${c.seconds.toFixed(0)} | ${c.failures} |`),
    '',
    warm && last
      ? `From ${warm.calls.toLocaleString('en')} to ${last.calls.toLocaleString('en')} calls: ${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)} % (${Math.abs(growth) <= MEMORY_BENCH.flatWithin ? 'flat within' : '**not** within'} ${MEMORY_BENCH.flatWithin * 100} %).`
      : '_No checkpoint reached._',
  ];
  if (snapshots.length === 2) {
    const [before, after] = snapshots as [Map<string, number>, Map<string, number>];
    const grown = [...after]
      .map(([name, count]) => [name, count - (before.get(name) ?? 0)] as const)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 10);
    lines.push('', 'Heap snapshots of the isolate (V8 collects garbage first), objects per constructor that grew most between the first and the last checkpoint:', '', '| constructor | first | last | grown |', '|---|---:|---:|---:|');
    for (const [name, grownBy] of grown) lines.push(`| ${name || '(anonymous)'} | ${before.get(name) ?? 0} | ${after.get(name)} | ${grownBy} |`);
  }
  return lines.join('\n');
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { calls: { type: 'string', default: String(MEMORY_BENCH.calls) }, heap: { type: 'boolean', default: false } } });
  console.log(await runMemoryBench({ calls: Number(values.calls), heap: values.heap }));
}
