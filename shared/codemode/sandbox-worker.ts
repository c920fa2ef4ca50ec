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
import { fail } from '../core/contract.ts';
import { overCallLimit, refusedAnswer } from './dispatcher.ts';
import {
  SANDBOX_COMPATIBILITY_DATE,
  SANDBOX_EXECUTE_PATH,
  SANDBOX_HEALTH_PATH,
  toFrames,
  Unframer,
  type FromSandbox,
  type RelayLimits,
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
      new SandboxExecution(server, env.LOADER);
      return new Response(null, { status: 101, webSocket: client });
    },
  };
}

/** The agent's module: its instrumented code as an arrow function handed the guard, `tools` and `console` (./sandbox/agent.d.ts). */
export function agentModule(source: string, guard: string): string {
  return `export default (${guard}, tools, console) => (${source});\n`;
}

/** The one execution a socket carries: its start, the tool calls relayed, its answer. */
class SandboxExecution {
  readonly #socket: WebSocket;
  readonly #loader: WorkerLoaderBinding;
  readonly #unframer = new Unframer(MAX_GATEWAY_MESSAGE_CHARS);
  /** Calls relayed to the gateway and not yet answered, by id. */
  readonly #pending = new Map<number, { label: string; resolve: (envelope: string) => void }>();
  readonly #startTimer: ReturnType<typeof setTimeout>;
  #open = true;
  #started = false;
  /** The loaded worker's entrypoint while the code runs: disposed when the gateway goes away first. */
  #running: ExecutionEntrypoint | undefined;
  #relayed = 0;
  #refused = 0;

  constructor(socket: WebSocket, loader: WorkerLoaderBinding) {
    this.#socket = socket;
    this.#loader = loader;
    this.#startTimer = setTimeout(() => this.#close(1008, 'no start message'), START_TIMEOUT_MS);
    socket.addEventListener('message', (event) => this.#received(event.data));
    socket.addEventListener('close', () => {
      this.#open = false;
      clearTimeout(this.#startTimer);
      for (const { label, resolve } of this.#pending.values()) resolve(ended(label));
      this.#pending.clear();
      dispose(this.#running);
    });
  }

  #received(frame: unknown): void {
    let text: string | undefined;
    try {
      text = this.#unframer.push(frame);
    } catch (error) {
      return this.#close(1009, (error as Error).message.slice(0, 100));
    }
    if (text === undefined) return;
    const message = JSON.parse(text) as ToSandbox;
    if (message.type === 'start' && !this.#started) {
      this.#started = true;
      clearTimeout(this.#startTimer);
      void this.#execute(message).finally(() => this.#close(1000, 'done'));
    } else if (message.type === 'answer') {
      this.#pending.get(message.id)?.resolve(message.envelope);
      this.#pending.delete(message.id);
    }
  }

  /** Loads the code in a worker of its own and runs it; answers `end`, or `failed` when the loaded worker fails. */
  async #execute({ source, guard, limits, relay }: Extract<ToSandbox, { type: 'start' }>): Promise<void> {
    this.#send({ type: 'running' });
    try {
      const worker = this.#loader.load({
        compatibilityDate: SANDBOX_COMPATIBILITY_DATE,
        mainModule: 'execution.js',
        modules: { 'execution.js': EXECUTION_MODULE, 'agent.js': agentModule(source, guard) },
        // No network and no bindings: the dispatcher, passed as an argument, is the only capability.
        globalOutbound: null,
        env: {},
        limits: { cpuMs: relay.cpuMs },
      });
      this.#running = worker.getEntrypoint() as ExecutionEntrypoint;
      const answer = await this.#running.evaluate((name, input, problem) => this.#dispatch(relay, name, input, problem), limits);
      this.#send({ type: 'end', answer, callsRefused: this.#refused });
    } catch (error) {
      this.#send({ type: 'failed', failure: error instanceof Error ? error.message : String(error) });
    } finally {
      dispose(this.#running);
    }
  }

  /** A tool call of the code: relayed to the gateway while within the bound, answered here past it. */
  #dispatch(relay: RelayLimits, name: unknown, input: unknown, problem: unknown): Promise<string> {
    const label = String(name).slice(0, 200);
    if (!this.#open) return Promise.resolve(ended(label));
    if (this.#relayed >= relay.innerCalls) {
      this.#refused++;
      return Promise.resolve(overCallLimit(label.slice(0, 100), relay.innerCalls));
    }
    const id = this.#relayed++;
    const json = typeof input === 'string' ? input : null;
    const fits = json !== null && json.length <= relay.inputChars;
    const call: FromSandbox = { type: 'call', id, name: label, input: fits ? json : null };
    if (json !== null && !fits) call.inputChars = json.length;
    if (typeof problem === 'string') call.problem = problem.slice(0, 2_000);
    return new Promise<string>((resolve) => {
      this.#pending.set(id, { label, resolve });
      this.#send(call);
    });
  }

  #send(message: FromSandbox): void {
    if (!this.#open) return;
    try {
      for (const frame of toFrames(JSON.stringify(message))) this.#socket.send(frame);
    } catch {
      this.#open = false;
    }
  }

  #close(code: number, reason: string): void {
    if (!this.#open) return;
    this.#open = false;
    this.#socket.close(code, reason);
  }
}

/** Releases the loaded worker's native handles now rather than at the collector's leisure (as @cloudflare/codemode's executor does). */
function dispose(entrypoint: ExecutionEntrypoint | undefined): void {
  try {
    entrypoint?.[Symbol.dispose]?.();
  } catch {
    // Disposal never masks the answer.
  }
}

/** The answer of a call the gateway can no longer answer: the execution ended (its wall time, or the caller went away). */
function ended(label: string): string {
  const tool = label.slice(0, 100);
  return refusedAnswer(
    tool,
    fail('UNKNOWN_ERROR', `The execution ended before the call of '${tool}' was answered; whether it ran is in the execution's answer.`, {
      details: { reason: 'execution_ended' },
    }),
  );
}
