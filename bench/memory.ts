/**
 * workerd's memory under a long run of calls: the gateway under `wrangler dev` (as `npm run dev`
 * serves it) in front of the Neon stand-in and redis-server behind the Upstash stand-in, over a
 * small seeded project. 20,000 calls of eight kinds in turn (writes, reads, an MCP tools/call, the
 * catalog, readiness, and two refusals), 4 at a time. Every 2,000 calls: the resident memory (RSS,
 * from /proc) of the workerd that runs the worker and of the workerd in front of it that wrangler
 * runs for itself (its proxy: none of this project's code runs there), and the worker isolate's
 * JavaScript heap (DevTools protocol, through wrangler's inspector proxy). At the end a heap
 * snapshot, before which V8 collects all garbage, shows what of the heap was only waiting to be
 * collected.
 * workerd runs with V8's defaults, as `npm run dev` runs it, or with the flags of `--v8-flags`
 * (`--v8-flags="--gc-global --optimize-for-size"`, FLAT_MEMORY_V8_FLAGS, to see the growth they prevent).
 * Warm-up is the first checkpoint (2,000 calls). The target is met when, at every later checkpoint,
 * the RSS of both workerd processes is within 20 % of its own at warm-up; the run says so.
 *
 * With `--heap`, a heap snapshot of the isolate at the warm-up and at the last checkpoint, and the
 * constructors whose objects grew most in between (count and own size). A snapshot is serialized
 * inside workerd and streamed through wrangler's proxy: it takes minutes under load, and adds its
 * own size to workerd's RSS, so a run with `--heap` does not measure flatness.
 *
 * Bounded: 20,000 calls or 50 minutes, whichever comes first; it stops what it started.
 * Run with `node bench/memory.ts [--calls N] [--minutes M] [--heap] [--v8-flags FLAGS]`; `runMemoryBench()` returns the markdown section.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { generateCorpus } from '../local/corpus.ts';
import { createProject, migrateDatabase } from '../local/database.ts';
import { startNeonStandIn } from '../local/neon-http.ts';
import { seedCorpus } from '../local/seed.ts';
import { startRedisServer, startUpstashStandIn } from '../local/upstash-rest.ts';
import { freePort, startWranglerDev } from '../local/wrangler-dev.ts';
import { FLAT_MEMORY_V8_FLAGS, LOCAL_V8_FLAGS, localV8Flags } from '../local/wrangler-env.ts';
import { injectRoundTrips } from './measure.ts';

/** The run's shape and bounds. */
export const MEMORY_BENCH = {
  calls: 20_000,
  every: 2_000,
  concurrency: 4,
  warmUpCheckpoints: 1,
  flatWithin: 0.2,
  ceilingMs: 50 * 60_000,
  corpus: { documents: 10, tasks: 200 },
};

/** The MCP protocol version whose requests need no `initialize` (each carries its own). */
const MCP_VERSION = '2026-07-28';

/** One checkpoint: calls so far, both workerd's RSS, the isolate's heap, and how the answers went. */
interface Checkpoint {
  calls: number;
  workerMiB: number;
  proxyMiB: number;
  /** The worker isolate's JavaScript heap: in use, and reserved by V8. */
  heapUsedMiB: number;
  heapTotalMiB: number;
  seconds: number;
  /** Answers other than the kind's expected one, so far. */
  unexpected: number;
}

/** One kind of call: how it is sent, and whether its answer is the one expected. */
interface CallKind {
  name: string;
  send(index: number): Promise<Response>;
  expected(response: Response): Promise<boolean>;
}

/** Runs the calls and returns the markdown section. */
export async function runMemoryBench({
  calls = MEMORY_BENCH.calls,
  heap = false,
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
    const kinds = callKinds(worker.url, apiKey, await firstTaskId(worker.url, apiKey));

    const checkpoints: Checkpoint[] = [];
    const snapshots: HeapSummary[] = [];
    const started = performance.now();
    let sent = 0;
    let unexpected = 0;
    /** Unexpected answers per kind of call and status. */
    const unexpectedKinds = new Map<string, number>();
    while (sent < calls && performance.now() - started < ceilingMs) {
      const batch = Math.min(MEMORY_BENCH.every, calls - sent);
      let next = 0;
      await Promise.all(
        Array.from({ length: MEMORY_BENCH.concurrency }, async () => {
          while (next < batch) {
            const kind = kinds[(sent + next) % kinds.length]!;
            const response = await kind.send(sent + next++);
            if (!(await kind.expected(response))) {
              unexpected++;
              const what = `${kind.name}: ${response.status}`;
              unexpectedKinds.set(what, (unexpectedKinds.get(what) ?? 0) + 1);
            }
          }
        }),
      );
      sent += batch;
      const usage = await heapUsage(session);
      const checkpoint = {
        calls: sent,
        workerMiB: rssMiB(workerd.worker),
        proxyMiB: rssMiB(workerd.proxy),
        ...usage,
        seconds: (performance.now() - started) / 1000,
        unexpected,
      };
      checkpoints.push(checkpoint);
      console.log(
        `  ${sent.toLocaleString('en')} calls: workerd RSS ${checkpoint.workerMiB.toFixed(0)} MiB (wrangler's proxy ${checkpoint.proxyMiB.toFixed(0)}), JS heap ${usage.heapUsedMiB.toFixed(1)} of ${usage.heapTotalMiB.toFixed(1)} MiB (${unexpected} unexpected answers)`,
      );
      if (heap && checkpoints.length === MEMORY_BENCH.warmUpCheckpoints) snapshots.push(await heapSummary(session));
    }
    console.log(`  ${verdict(checkpoints, calls)}`);
    // workerd answers no HeapProfiler.collectGarbage; V8 collects all garbage before a snapshot.
    const final = await heapSummary(session);
    if (heap && checkpoints.length > MEMORY_BENCH.warmUpCheckpoints) snapshots.push(final);
    const collected = await heapUsage(session);
    return memoryMarkdown({
      checkpoints,
      asked: calls,
      kinds: kinds.map((kind) => kind.name),
      collected,
      snapshots,
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

const HEADING = '## Memory of workerd under a long run (bench/memory.ts)';

/** The kinds of call, the i-th call being of kind i mod 8. */
function callKinds(base: string, apiKey: string, taskId: string): CallKind[] {
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const queries = generateCorpus(MEMORY_BENCH.corpus).map((document) => document.title);
  const tool = (id: string, input: unknown, headersOf = headers) =>
    fetch(`${base}/tools/${id}`, { method: 'POST', headers: headersOf, body: JSON.stringify(input) });
  const status =
    (...statuses: number[]) =>
    async (response: Response) => (await response.arrayBuffer(), statuses.includes(response.status));
  return [
    {
      name: 'log-mood (a new entry each)',
      // Each entry its own minute, so none collides with another.
      send: (i) =>
        tool('log-mood', {
          user_id: 'bench',
          mood: 'happy',
          energy_level: 1 + (i % 10),
          timestamp: new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString().replace('.000', ''),
        }),
      expected: status(200),
    },
    {
      name: 'semantic-search',
      send: (i) => tool('semantic-search', { query: queries[i % queries.length], limit: 5 }),
      expected: status(200),
    },
    { name: 'get-document-context', send: () => tool('get-document-context', { task_ids: [taskId] }), expected: status(200) },
    {
      name: `MCP tools/call of semantic-search (${MCP_VERSION}, stateless)`,
      send: (i) =>
        fetch(`${base}/mcp`, {
          method: 'POST',
          headers: {
            ...headers,
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': MCP_VERSION,
            'mcp-method': 'tools/call',
            'mcp-name': 'semantic-search',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: i,
            method: 'tools/call',
            params: {
              name: 'semantic-search',
              arguments: { query: queries[i % queries.length], limit: 5 },
              _meta: { 'io.modelcontextprotocol/protocolVersion': MCP_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} },
            },
          }),
        }),
      expected: async (response) =>
        response.ok && ((await response.json()) as { result?: { isError?: boolean } }).result?.isError === false,
    },
    { name: '`GET /tools`', send: () => fetch(`${base}/tools`), expected: status(200) },
    {
      name: 'log-mood refused (energy_level out of range: 400)',
      send: () => tool('log-mood', { user_id: 'bench', mood: 'happy', energy_level: 11, timestamp: '2025-01-01T00:00:00Z' }),
      expected: status(400),
    },
    {
      name: 'an unknown API key refused (401, then 429 once the address has failed too often)',
      send: () => tool('log-mood', {}, { ...headers, authorization: 'Bearer et_unknownbenchkey' }),
      expected: status(401, 429),
    },
    { name: '`GET /health/ready`', send: () => fetch(`${base}/health/ready`), expected: status(200) },
  ];
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

/** A DevTools protocol session with the worker's isolate. */
type Inspector = Awaited<ReturnType<typeof inspect>>;

/** Opens a DevTools protocol session with the worker's isolate, through wrangler's inspector proxy. */
async function inspect(inspectorPort: number) {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json()) as { webSocketDebuggerUrl: string }[];
  // The proxy admits a client that names a loopback Origin (undici's WebSocket takes headers).
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl, { headers: { origin: 'http://127.0.0.1' } } as unknown as string[]);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  let id = 0;
  let closed: string | undefined;
  const pending = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  const listeners = new Map<string, (params: unknown) => void>();
  socket.onmessage = (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; method?: string; params?: unknown; result?: unknown };
    if (message.method) listeners.get(message.method)?.(message.params);
    if (message.id !== undefined) pending.get(message.id)?.resolve(message.result);
  };
  socket.onclose = (event) => {
    closed = `the inspector closed the session (${event.code} ${event.reason})`;
    for (const { reject } of pending.values()) reject(new Error(closed));
  };
  return {
    /** Sends a command and resolves with its result; rejects when the session closes or after `timeoutMs`. */
    send: <T>(method: string, timeoutMs = 10 * 60_000) =>
      new Promise<T>((resolve, reject) => {
        if (closed) return reject(new Error(closed));
        const sent = ++id;
        const timer = setTimeout(
          () => reject(new Error(`${method}: no answer from the inspector within ${timeoutMs / 1000} s`)),
          timeoutMs,
        );
        const settled = () => (clearTimeout(timer), pending.delete(sent));
        pending.set(sent, { resolve: (result) => (settled(), resolve(result as T)), reject: (error) => (settled(), reject(error)) });
        socket.send(JSON.stringify({ id: sent, method }));
      }),
    on: (method: string, listener: (params: unknown) => void) => void listeners.set(method, listener),
    close: () => socket.close(),
  };
}

/** The isolate's JavaScript heap: in use, and the whole heap V8 holds, MiB. */
async function heapUsage(session: Inspector): Promise<{ heapUsedMiB: number; heapTotalMiB: number }> {
  const { usedSize, totalSize } = await session.send<{ usedSize: number; totalSize: number }>('Runtime.getHeapUsage');
  return { heapUsedMiB: usedSize / 2 ** 20, heapTotalMiB: totalSize / 2 ** 20 };
}

/** Objects per constructor name in a heap snapshot: how many, and their own size in bytes. */
type HeapSummary = Map<string, { count: number; bytes: number }>;

/** A heap snapshot of the isolate (V8 collects garbage before taking one), summed per constructor. */
async function heapSummary(session: Inspector): Promise<HeapSummary> {
  const chunks: string[] = [];
  session.on('HeapProfiler.addHeapSnapshotChunk', (params) => chunks.push((params as { chunk: string }).chunk));
  await session.send('HeapProfiler.enable');
  await session.send('HeapProfiler.takeHeapSnapshot');
  await session.send('HeapProfiler.disable');
  const snapshot = JSON.parse(chunks.join('')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snapshot.snapshot.meta.node_fields;
  const [typeIndex, nameIndex, sizeIndex] = [fields.indexOf('type'), fields.indexOf('name'), fields.indexOf('self_size')];
  const types = snapshot.snapshot.meta.node_types[0];
  const summary: HeapSummary = new Map();
  for (let at = 0; at < snapshot.nodes.length; at += fields.length) {
    const type = types[snapshot.nodes[at + typeIndex]!]!;
    // Objects by their constructor; strings, code, arrays' backing stores and the rest by their kind.
    // V8 names some internal objects with their snapshot id ("system / Context / scope @123"), which differs between snapshots.
    const name =
      type === 'object'
        ? snapshot.strings[snapshot.nodes[at + nameIndex]!]!.replace(/ @\d+$/, '')
        : type === 'closure'
          ? `closure ${snapshot.strings[snapshot.nodes[at + nameIndex]!]}`
          : `(${type})`;
    const entry = summary.get(name) ?? { count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += snapshot.nodes[at + sizeIndex]!;
    summary.set(name, entry);
  }
  return summary;
}

interface MemoryRun {
  checkpoints: Checkpoint[];
  ceilingMs: number;
  unexpectedKinds: Map<string, number>;
  v8Flags: string;
  asked: number;
  kinds: string[];
  /** The heap after the full collection that precedes the last heap snapshot. */
  collected: { heapUsedMiB: number; heapTotalMiB: number };
  snapshots: HeapSummary[];
}

const percent = (from: number, to: number) => `${to >= from ? '+' : ''}${(((to - from) / from) * 100).toFixed(1)} %`;

/** Whether the run met the target, in one line that says so (not judged when the time bound cut it short). */
function verdict(checkpoints: Checkpoint[], asked: number): string {
  const warm = checkpoints[MEMORY_BENCH.warmUpCheckpoints - 1];
  const after = checkpoints.slice(MEMORY_BENCH.warmUpCheckpoints);
  if (!warm || !after.length) return 'Target NOT JUDGED: no checkpoint after warm-up.';
  const drift = (of: 'workerMiB' | 'proxyMiB') => Math.max(...after.map((c) => Math.abs(c[of] - warm[of]) / warm[of]));
  const [worker, proxy] = [drift('workerMiB'), drift('proxyMiB')];
  const reached = after.at(-1)!.calls;
  const status =
    reached < asked
      ? `NOT JUDGED (the time bound stopped it at ${reached.toLocaleString('en')} of ${asked.toLocaleString('en')} calls)`
      : worker <= MEMORY_BENCH.flatWithin && proxy <= MEMORY_BENCH.flatWithin
        ? 'MET'
        : 'NOT MET';
  const within = (value: number) => `${(value * 100).toFixed(1)} %`;
  return `Target ${status}: after warm-up (${warm.calls.toLocaleString('en')} calls), the worker's workerd stayed within ${within(worker)} of its ${warm.workerMiB.toFixed(0)} MiB and wrangler's proxy within ${within(proxy)} of its ${warm.proxyMiB.toFixed(0)} MiB (target: ${MEMORY_BENCH.flatWithin * 100} %).`;
}

function memoryMarkdown({ checkpoints, asked, kinds, collected, snapshots, v8Flags, unexpectedKinds, ceilingMs }: MemoryRun): string {
  const warm = checkpoints[MEMORY_BENCH.warmUpCheckpoints - 1];
  const last = checkpoints.at(-1);
  const lines = [
    HEADING,
    '',
    `The gateway under \`wrangler dev\` (as \`npm run dev\` serves it) over the Neon stand-in and redis-server behind the Upstash stand-in, a project of ${MEMORY_BENCH.corpus.documents} documents and ${MEMORY_BENCH.corpus.tasks} tasks, the per-key rate limit lifted. ${asked.toLocaleString('en')} calls asked (bounded at ${ceilingMs / 60_000} minutes), ${MEMORY_BENCH.concurrency} at a time, of ${kinds.length} kinds in turn: ${kinds.join('; ')}. Every ${MEMORY_BENCH.every.toLocaleString('en')} calls: the resident memory (RSS) of the workerd that runs the worker and of the workerd wrangler runs in front of it (its proxy, which forwards each call and runs none of this project's code), and the worker isolate's JavaScript heap (in use / held by V8), read through the inspector with \`Runtime.getHeapUsage\`. workerd's V8 flags: ${v8Flags ? `\`${v8Flags}\`` : "V8's defaults"}, and \`${LOCAL_V8_FLAGS}\` (LOCAL_V8_FLAGS, which every local workerd runs with)${v8Flags === FLAT_MEMORY_V8_FLAGS ? ' (FLAT_MEMORY_V8_FLAGS, which `npm run dev` does not set)' : v8Flags ? '' : ', as `npm run dev` runs it'}. Warm-up: the first ${MEMORY_BENCH.every.toLocaleString('en')} calls (the first checkpoint). Target: after warm-up, the RSS of both workerd processes flat within ${MEMORY_BENCH.flatWithin * 100} % (at every later checkpoint, within ${MEMORY_BENCH.flatWithin * 100} % of its own at the first).`,
    '',
    "| calls | workerd RSS (the worker), MiB | workerd RSS (wrangler's proxy), MiB | JS heap in use, MiB | JS heap held, MiB | elapsed, s | unexpected answers so far |",
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...checkpoints.map(
      (c) =>
        `| ${c.calls.toLocaleString('en')} | ${c.workerMiB.toFixed(0)} | ${c.proxyMiB.toFixed(0)} | ${c.heapUsedMiB.toFixed(1)} | ${c.heapTotalMiB.toFixed(1)} | ${c.seconds.toFixed(0)} | ${c.unexpected} |`,
    ),
    '',
  ];
  if (!warm || !last) return [...lines, '_No checkpoint reached._'].join('\n');
  lines.push(
    `**${verdict(checkpoints, asked)}**`,
    '',
    `From ${warm.calls.toLocaleString('en')} to ${last.calls.toLocaleString('en')} calls: the worker's workerd ${percent(warm.workerMiB, last.workerMiB)}, wrangler's proxy ${percent(warm.proxyMiB, last.proxyMiB)}, the JS heap in use ${percent(warm.heapUsedMiB, last.heapUsedMiB)}.`,
    '',
    `Unexpected answers: ${unexpectedKinds.size ? [...unexpectedKinds].map(([what, count]) => `${what} (${count})`).join('; ') : 'none'}.`,
    '',
    `After a full garbage collection at the end (the one V8 runs before a heap snapshot, taken through the inspector): JS heap in use ${last.heapUsedMiB.toFixed(1)} → ${collected.heapUsedMiB.toFixed(1)} MiB, held ${last.heapTotalMiB.toFixed(1)} → ${collected.heapTotalMiB.toFixed(1)} MiB.`,
  );
  if (snapshots.length === 2) {
    const [before, after] = snapshots as [HeapSummary, HeapSummary];
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
      `Heap snapshots of the isolate at ${warm.calls.toLocaleString('en')} and ${last.calls.toLocaleString('en')} calls (V8 collects garbage before each): ${total(before).toFixed(1)} → ${total(after).toFixed(1)} MiB of live objects. The constructors (or kinds of heap entry) whose objects grew most, by their own size:`,
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
      heap: { type: 'boolean', default: false },
      'v8-flags': { type: 'string' },
      minutes: { type: 'string', default: String(MEMORY_BENCH.ceilingMs / 60_000) },
    },
  });
  console.log(
    await runMemoryBench({
      calls: Number(values.calls),
      heap: values.heap,
      v8Flags: values['v8-flags'],
      ceilingMs: Number(values.minutes) * 60_000,
    }),
  );
}
