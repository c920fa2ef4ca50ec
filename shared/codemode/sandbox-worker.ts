/**
 * The sandbox worker (functions/sandbox.ts): it runs agents' code for the gateway, so that what
 * the code does to its sandbox (runs out of memory, spins, crashes) happens outside the gateway.
 * It holds the Worker Loader binding and nothing else: no secret, no database, no network for the
 * code it loads.
 *
 * The gateway opens one WebSocket per execution (./protocol.ts). The worker loads the code in a
 * fresh worker of its own (`globalOutbound: null`, `env: {}`, Cloudflare's CPU limit set), with the
 * execution module (./sandbox/execution.ts) as its main module and the agent's code beside it, and
 * calls its `evaluate` over RPC with one function: a tool call, relayed to the gateway as a `call`
 * and answered with the gateway's `answer`. It relays at most `innerCalls` calls and answers the
 * others itself, so a flood of calls never reaches the gateway.
 *
 * Deployed it is reachable only through the gateway's service binding (it has no route). Locally
 * each of its processes runs one execution at a time under the sandbox host (local/sandbox-host.ts).
 */
import { envelope, fail, metaWithoutExecution } from '../core/contract.ts';
import { overCallLimit } from './dispatcher.ts';
import {
  SANDBOX_COMPATIBILITY_DATE,
  SANDBOX_EXECUTE_PATH,
  SANDBOX_HEALTH_PATH,
  toFrames,
  Unframer,
  type FromSandbox,
  type SandboxAnswer,
  type ToSandbox,
} from './protocol.ts';
import { EXECUTION_MODULE } from './sandbox/module.ts';

/**
 * The Worker Loader binding as the sandbox uses it (workers-types' `WorkerLoader`, written out so
 * that code type-checked for Node needs no Workers types).
 */
export interface WorkerLoaderBinding {
  load(code: {
    compatibilityDate: string;
    mainModule: string;
    modules: Record<string, string>;
    /** null: no network at all from the loaded worker. */
    globalOutbound?: null;
    env?: Record<string, unknown>;
    limits?: { cpuMs?: number; subRequests?: number };
  }): { getEntrypoint(): unknown };
}

/** The sandbox worker's bindings: the Worker Loader (`[[worker_loaders]]` in wrangler.sandbox.toml). */
export interface SandboxEnv {
  LOADER?: WorkerLoaderBinding;
}

/** Characters of one message from the gateway at most: a start (100,000 characters of code, instrumented) or an envelope. */
const MAX_GATEWAY_MESSAGE_CHARS = 16 * 1024 * 1024;

/** How long the gateway has to send `start` after opening the socket. */
const START_TIMEOUT_MS = 10_000;

/** The loaded worker's entrypoint, as this worker calls it. */
interface ExecutionEntrypoint extends Partial<Disposable> {
  evaluate(dispatcher: (name: unknown, input: unknown, problem: unknown) => Promise<string>, limits: unknown): Promise<SandboxAnswer>;
}

/** The sandbox worker's module: `GET /health`, and `GET /execute` upgraded to an execution's WebSocket. */
export function createSandboxWorker() {
  return {
    async fetch(request: Request, env: SandboxEnv): Promise<Response> {
      const { pathname } = new URL(request.url);
      if (pathname === SANDBOX_HEALTH_PATH) return new Response('ok');
      if (pathname !== SANDBOX_EXECUTE_PATH)
        return new Response(`Not found: the sandbox serves ${SANDBOX_EXECUTE_PATH} and ${SANDBOX_HEALTH_PATH}.`, { status: 404 });
      if (request.headers.get('upgrade')?.toLowerCase() !== 'websocket')
        return new Response(`${SANDBOX_EXECUTE_PATH} is a WebSocket: send Upgrade: websocket.`, { status: 426 });
      if (!env.LOADER) return new Response('The sandbox worker has no Worker Loader binding named LOADER.', { status: 500 });
      const { 0: client, 1: server } = new WebSocketPair();
      server.accept();
      serveExecution(server, env.LOADER);
      return new Response(null, { status: 101, webSocket: client });
    },
  };
}

/** The agent's module: its instrumented code as an arrow function handed the guard, `tools` and `console` (./sandbox/agent.d.ts). */
export function agentModule(source: string, guard: string): string {
  return `export default (${guard}, tools, console) => (${source});\n`;
}

/** Runs the one execution `socket` carries. */
function serveExecution(socket: WebSocket, loader: WorkerLoaderBinding): void {
  const unframer = new Unframer(MAX_GATEWAY_MESSAGE_CHARS);
  const pending = new Map<number, { label: string; resolve: (envelope: string) => void }>();
  let open = true;
  let started = false;
  const send = (message: FromSandbox) => {
    if (!open) return;
    for (const frame of toFrames(JSON.stringify(message))) socket.send(frame);
  };
  const close = (code: number, reason: string) => {
    if (!open) return;
    open = false;
    socket.close(code, reason);
  };
  const startTimer = setTimeout(() => close(1008, 'no start message'), START_TIMEOUT_MS);
  socket.addEventListener('message', (event) => {
    let text: string | undefined;
    try {
      text = unframer.push(event.data);
    } catch (error) {
      close(1009, (error as Error).message.slice(0, 100));
      return;
    }
    if (text === undefined) return;
    const message = JSON.parse(text) as ToSandbox;
    if (message.type === 'start' && !started) {
      started = true;
      clearTimeout(startTimer);
      void execute(message).finally(() => close(1000, 'done'));
    } else if (message.type === 'answer') {
      pending.get(message.id)?.resolve(message.envelope);
      pending.delete(message.id);
    }
  });
  socket.addEventListener('close', () => {
    open = false;
    clearTimeout(startTimer);
    for (const { label, resolve } of pending.values()) resolve(ended(label));
    pending.clear();
  });

  async function execute({ source, guard, limits, relay }: Extract<ToSandbox, { type: 'start' }>): Promise<void> {
    send({ type: 'running' });
    let relayed = 0;
    let refused = 0;
    let nextId = 0;
    const dispatcher = (name: unknown, input: unknown, problem: unknown): Promise<string> => {
      const label = String(name).slice(0, 200);
      if (!open) return Promise.resolve(ended(label));
      if (relayed >= relay.innerCalls) {
        refused++;
        return Promise.resolve(overCallLimit(label.slice(0, 100), relay.innerCalls));
      }
      relayed++;
      const id = nextId++;
      const json = typeof input === 'string' ? input : null;
      const fits = json !== null && json.length <= relay.inputChars;
      const call: FromSandbox = { type: 'call', id, name: label, input: fits ? json : null };
      if (json !== null && !fits) call.inputChars = json.length;
      if (typeof problem === 'string') call.problem = problem.slice(0, 2_000);
      return new Promise<string>((resolve) => {
        pending.set(id, { label, resolve });
        send(call);
      });
    };
    let entrypoint: ExecutionEntrypoint | undefined;
    try {
      const worker = loader.load({
        compatibilityDate: SANDBOX_COMPATIBILITY_DATE,
        mainModule: 'execution.js',
        modules: { 'execution.js': EXECUTION_MODULE, 'agent.js': agentModule(source, guard) },
        // No network and no bindings: the dispatcher, passed as an argument, is the only capability.
        globalOutbound: null,
        env: {},
        limits: { cpuMs: relay.cpuMs },
      });
      entrypoint = worker.getEntrypoint() as ExecutionEntrypoint;
      const answer = await entrypoint.evaluate(dispatcher, limits);
      send({ type: 'end', answer, callsRefused: refused });
    } catch (error) {
      send({ type: 'failed', failure: error instanceof Error ? error.message : String(error) });
    } finally {
      try {
        entrypoint?.[Symbol.dispose]?.();
      } catch {
        // Disposal never masks the answer.
      }
    }
  }
}

/** The answer of a call the gateway can no longer answer: the execution ended (its wall time, or the caller went away). */
function ended(label: string): string {
  const tool = label.slice(0, 100);
  const failure = fail(
    'UNKNOWN_ERROR',
    `The execution ended before the call of '${tool}' was answered; whether it ran is in the execution's answer.`,
    {
      details: { reason: 'execution_ended' },
    },
  );
  return JSON.stringify(envelope(failure, metaWithoutExecution(tool)));
}
