/**
 * Running an agent's code in the sandbox, from the gateway's side: one WebSocket to the sandbox
 * worker per execution (./protocol.ts), through the fetcher ./enabled.ts finds: deployed the
 * `SANDBOX` service binding, locally the sandbox host (`SANDBOX_URL`, set by `npm run dev`, the
 * tests and local/wrangler-dev.ts). The code runs there, never in the gateway's isolate or process: what it
 * does to its sandbox (memory, a loop no guard reaches, a fatal error of V8) ends that sandbox only.
 *
 * Each tool call the sandbox relays is answered through `calls` (./dispatcher.ts: the pipeline,
 * under the caller's scope). Every message is checked by ./answer.ts before use, and every way the
 * sandbox can end is an answer ({@link SandboxEnd}): its result, a bound it reached, no sandbox
 * free, or its failure.
 */
import { DEFAULT_BODY_LIMIT_BYTES } from '../core/body.ts';
import type { ServiceFetcher } from '../runtime/env.ts';
import { checkAnswer, MAX_MESSAGE_CHARS, readSandboxMessage, type CheckedAnswer } from './answer.ts';
import type { InnerCalls } from './dispatcher.ts';
import { CODE_MODE_LIMITS, type StoppingLimit } from './limits.ts';
import { SANDBOX_CLOSE_CODES, SANDBOX_EXECUTE_PATH, toFrames, Unframer, type SandboxLimits, type ToSandbox } from './protocol.ts';

/** How an execution in the sandbox ended. */
export type SandboxEnd =
  /** The code answered (what it returned or threw), checked; `callsRefused`: calls the sandbox answered itself, past the bound. */
  | { ok: true; answer: CheckedAnswer; callsRefused: number }
  /** The sandbox was stopped at a bound: its wall time, or (its process or Cloudflare said so) its CPU time, memory or blocking. */
  | { ok: false; reason: 'limit'; limit: StoppingLimit; message: string }
  /** No sandbox took the code in time, or none could be reached: nothing ran. */
  | { ok: false; reason: 'busy'; message: string }
  /** The sandbox failed otherwise, or sent what the gateway does not accept. */
  | { ok: false; reason: 'sandbox_failed'; message: string };

/** A WebSocket as the Workers runtime hands it over in a 101 answer: accepted before use (typed here for Node's type check too). */
type WorkersWebSocket = WebSocket & { accept(): void };

/** Close codes (./protocol.ts) that name a bound. */
const CLOSED_AT: Record<number, StoppingLimit> = {
  [SANDBOX_CLOSE_CODES.memory]: 'memory_mb',
  [SANDBOX_CLOSE_CODES.blocking]: 'blocking_ms',
  [SANDBOX_CLOSE_CODES.cpu]: 'cpu_ms',
};

/** Calls the sandbox may relay beyond the bound before the gateway takes it for broken (it answers those itself). */
const RELAYED_CALLS_SLACK = 10;

/** How long past `sandboxWaitMs` the gateway waits for the sandbox to say it runs the code (the sandbox host answers first). */
const WAIT_GRACE_MS = 2_000;

/** The bounds the execution module reads. */
const SANDBOX_LIMITS: SandboxLimits = {
  guardTicks: CODE_MODE_LIMITS.guardTicks,
  blockingMs: CODE_MODE_LIMITS.blockingMs,
  wallTimeMs: CODE_MODE_LIMITS.wallTimeMs,
  logLines: CODE_MODE_LIMITS.logLines,
  logChars: CODE_MODE_LIMITS.logChars,
  allocation: CODE_MODE_LIMITS.allocation,
  resultHandedBackChars: CODE_MODE_LIMITS.resultHandedBackChars,
};

/**
 * Runs `source` (an instrumented async arrow function whose guard is named `guard`, see
 * ./guard.ts) in the sandbox, answering its tool calls through `calls`. Resolves once the code
 * answered, at its wall time (counted from when the sandbox runs it), or when the sandbox ends.
 * Never throws.
 */
export async function runInSandbox(
  sandbox: ServiceFetcher,
  { source, guard, calls }: { source: string; guard: string; calls: InnerCalls },
): Promise<SandboxEnd> {
  let socket: WorkersWebSocket | null;
  try {
    const response = await sandbox.fetch(`https://sandbox${SANDBOX_EXECUTE_PATH}`, { headers: { upgrade: 'websocket' } });
    socket = (response as Response & { webSocket: WorkersWebSocket | null }).webSocket;
    if (!socket)
      return { ok: false, reason: 'sandbox_failed', message: `the sandbox answered ${response.status} instead of taking the code` };
  } catch (error) {
    return { ok: false, reason: 'busy', message: `the sandbox could not be reached (${(error as Error).message})` };
  }
  socket.accept();
  return new SandboxRun(socket, calls).ended({ source, guard });
}

/** One execution's socket, from the start it sends to the end it resolves with. */
class SandboxRun {
  readonly #socket: WorkersWebSocket;
  readonly #calls: InnerCalls;
  readonly #unframer = new Unframer(MAX_MESSAGE_CHARS);
  #settled = false;
  #relayed = 0;
  #waitTimer?: ReturnType<typeof setTimeout>;
  #wallTimer?: ReturnType<typeof setTimeout>;
  #resolve: (end: SandboxEnd) => void = () => undefined;

  constructor(socket: WorkersWebSocket, calls: InnerCalls) {
    this.#socket = socket;
    this.#calls = calls;
  }

  /** Sends the code, and resolves with how the execution ended. */
  ended({ source, guard }: { source: string; guard: string }): Promise<SandboxEnd> {
    const done = new Promise<SandboxEnd>((resolve) => (this.#resolve = resolve));
    this.#waitTimer = setTimeout(
      () => this.#settle({ ok: false, reason: 'busy', message: `no sandbox took the code within ${CODE_MODE_LIMITS.sandboxWaitMs} ms` }),
      CODE_MODE_LIMITS.sandboxWaitMs + WAIT_GRACE_MS,
    );
    this.#socket.addEventListener('message', (event) => this.#received(event.data));
    this.#socket.addEventListener('close', (event) => this.#settle(closedEarly(event.code, event.reason)));
    this.#socket.addEventListener('error', () =>
      this.#settle({ ok: false, reason: 'sandbox_failed', message: 'the connection to the sandbox broke' }),
    );
    this.#send({
      type: 'start',
      source,
      guard,
      limits: SANDBOX_LIMITS,
      relay: { innerCalls: CODE_MODE_LIMITS.innerCalls, inputChars: DEFAULT_BODY_LIMIT_BYTES, cpuMs: CODE_MODE_LIMITS.cpuMs },
    });
    return done;
  }

  /** A frame from the sandbox: checked (./answer.ts) before anything is done with it. */
  #received(frame: unknown): void {
    if (this.#settled) return;
    let text: string | undefined;
    try {
      text = this.#unframer.push(frame);
    } catch (error) {
      return this.#broken((error as Error).message);
    }
    if (text === undefined) return;
    const read = readSandboxMessage(text);
    if (!read.ok) return this.#broken(read.problem);
    const message = read.message;
    if (message.type === 'running') {
      clearTimeout(this.#waitTimer);
      this.#wallTimer ??= setTimeout(
        () =>
          this.#settle({
            ok: false,
            reason: 'limit',
            limit: 'wall_time_ms',
            message: `the code did not finish within ${CODE_MODE_LIMITS.wallTimeMs} ms`,
          }),
        CODE_MODE_LIMITS.wallTimeMs,
      );
    } else if (message.type === 'call') {
      if (++this.#relayed > CODE_MODE_LIMITS.innerCalls + RELAYED_CALLS_SLACK)
        return this.#broken(`more than the ${CODE_MODE_LIMITS.innerCalls} calls it may relay`);
      const { id, name, input, problem, inputChars } = message;
      void this.#calls.call(name, input, { problem, inputChars }).then((envelope) => {
        if (!this.#settled) this.#send({ type: 'answer', id, envelope });
      });
    } else if (message.type === 'end') {
      const checked = checkAnswer(message.answer);
      this.#settle(
        checked.ok ? { ok: true, answer: checked.answer, callsRefused: message.callsRefused } : this.#brokenEnd(checked.problem),
      );
    } else {
      this.#settle(loadedWorkerFailed(message.failure));
    }
  }

  #send(message: ToSandbox): void {
    try {
      for (const frame of toFrames(JSON.stringify(message))) this.#socket.send(frame);
    } catch {
      this.#settle({
        ok: false,
        reason: 'sandbox_failed',
        message: 'the connection to the sandbox closed while the gateway was writing to it',
      });
    }
  }

  #brokenEnd(problem: string): SandboxEnd {
    return { ok: false, reason: 'sandbox_failed', message: `the sandbox sent ${problem}` };
  }

  #broken(problem: string): void {
    this.#settle(this.#brokenEnd(problem));
  }

  #settle(end: SandboxEnd): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#waitTimer);
    clearTimeout(this.#wallTimer);
    try {
      this.#socket.close(1000, 'done');
    } catch {
      // Already closed by the other side.
    }
    this.#resolve(end);
  }
}

/** The end of a socket that closed before the sandbox answered: a bound when its close code (the sandbox host's) names one. */
export function closedEarly(code: number, reason: unknown): SandboxEnd {
  const said = typeof reason === 'string' && reason ? `: ${reason.slice(0, 200)}` : '';
  const limit = CLOSED_AT[code];
  if (limit) return { ok: false, reason: 'limit', limit, message: `the sandbox's process was stopped${said}` };
  if (code === SANDBOX_CLOSE_CODES.busy) return { ok: false, reason: 'busy', message: `no sandbox took the code in time${said}` };
  return loadedWorkerFailed(`the sandbox closed the connection before answering (code ${code}${said})`);
}

/**
 * The end of a sandbox whose loaded worker failed instead of answering. Deployed, Cloudflare ends
 * a loaded worker past its CPU limit ("Worker exceeded CPU time limit.") or its isolate's memory
 * ("Worker has exceeded memory limit."), and the call into it throws that error.
 */
export function loadedWorkerFailed(message: string): SandboxEnd {
  if (/memory limit|out of memory/i.test(message)) return { ok: false, reason: 'limit', limit: 'memory_mb', message };
  if (/CPU time limit|exceeded CPU|CPU limit/i.test(message)) return { ok: false, reason: 'limit', limit: 'cpu_ms', message };
  return { ok: false, reason: 'sandbox_failed', message };
}
