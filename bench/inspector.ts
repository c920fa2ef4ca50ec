/**
 * The worker isolate's JavaScript heap, read over the DevTools protocol through wrangler's
 * inspector proxy (`wrangler dev --inspector-port`): its size as V8 reports it, its size after a
 * full garbage collection, and what it holds per constructor.
 *
 * workerd's inspector does not answer `HeapProfiler.collectGarbage` (no answer within 20 s, workerd
 * 1.20261023.1), so the full collection is the one V8 runs before every heap snapshot: a snapshot is
 * taken (streamed in chunks, and summed per constructor only when asked), then the heap is read.
 */

/** A DevTools protocol session with the worker's isolate. */
export type Inspector = Awaited<ReturnType<typeof inspect>>;

/** Opens a DevTools protocol session with the worker's isolate, through wrangler's inspector proxy. */
export async function inspect(inspectorPort: number) {
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

/** The isolate's JavaScript heap, MiB: in use, the whole heap V8 holds, and the backing stores of its ArrayBuffers (outside the heap). */
export interface HeapUsage {
  usedMiB: number;
  heldMiB: number;
  backingMiB: number;
}

/** The isolate's JavaScript heap as V8 reports it now (garbage not yet collected included). */
export async function heapUsage(session: Inspector): Promise<HeapUsage> {
  const {
    usedSize,
    totalSize,
    backingStorageSize = 0,
  } = await session.send<{
    usedSize: number;
    totalSize: number;
    backingStorageSize?: number;
  }>('Runtime.getHeapUsage');
  return { usedMiB: usedSize / 2 ** 20, heldMiB: totalSize / 2 ** 20, backingMiB: backingStorageSize / 2 ** 20 };
}

/** Objects per constructor name in a heap snapshot: how many, and their own size in bytes. */
export type HeapSummary = Map<string, { count: number; bytes: number }>;

/**
 * Collects all garbage (the collection V8 runs before a heap snapshot) and answers the heap left,
 * with the snapshot summed per constructor when `summarize`.
 */
export async function collectedHeap(session: Inspector, { summarize = false } = {}): Promise<HeapUsage & { summary?: HeapSummary }> {
  const chunks: string[] = [];
  session.on('HeapProfiler.addHeapSnapshotChunk', (params) => void (summarize && chunks.push((params as { chunk: string }).chunk)));
  await session.send('HeapProfiler.enable');
  await session.send('HeapProfiler.takeHeapSnapshot');
  await session.send('HeapProfiler.disable');
  const usage = await heapUsage(session);
  return summarize ? { ...usage, summary: summaryOf(chunks.join('')) } : usage;
}

/** A heap snapshot (its JSON) summed per constructor. */
function summaryOf(json: string): HeapSummary {
  const snapshot = JSON.parse(json) as {
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
