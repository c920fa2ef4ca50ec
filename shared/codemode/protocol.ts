/**
 * What the gateway and the sandbox worker (functions/sandbox.ts) say to each other: one WebSocket
 * per execution, JSON text messages.
 *
 * 1. The gateway sends `start` (the instrumented code, its guard's name, the bounds).
 * 2. The sandbox answers `running` once it holds the code, then loads it in a worker of its own and
 *    relays every `tools[...]()` the code makes as a `call`; the gateway answers each with `answer`
 *    (the envelope, as JSON text), having run it through the pipeline.
 * 3. The sandbox sends `end`: what the code answered (its result's JSON, or what it threw, with its
 *    logs); or `failed`, why the loaded worker failed (deployed: Cloudflare's CPU or memory limit).
 *    Then it closes.
 *
 * A socket that closes without `end` or `failed` means the sandbox died; locally the sandbox host says why in
 * the close code ({@link SANDBOX_CLOSE_CODES}). The gateway trusts nothing it receives: every
 * message is checked by ./answer.ts before use.
 *
 * A message longer than {@link FRAME_CHARS} travels as several frames (Workers refuse a received
 * WebSocket message over 1 MiB): {@link toFrames} and {@link Unframer}.
 */

/**
 * The compatibility date of the sandbox worker and of the workers it loads: the gateway's
 * (wrangler.toml, wrangler.sandbox.toml), never newer than the workerd that runs them locally supports.
 */
export const SANDBOX_COMPATIBILITY_DATE = '2026-10-01';

/** The sandbox worker's path that opens an execution's WebSocket. */
export const SANDBOX_EXECUTE_PATH = '/execute';

/** The sandbox worker's health path (locally the sandbox host polls it to see a stalled process). */
export const SANDBOX_HEALTH_PATH = '/health';

/** The settings the execution module (./sandbox/execution.ts) reads, sent with `start`. */
export interface SandboxLimits {
  guardTicks: number;
  blockingMs: number;
  wallTimeMs: number;
  logLines: number;
  logChars: number;
  allocation: number;
  /** Characters of the result's JSON handed back at most. */
  resultHandedBackChars: number;
}

/** Settings the sandbox worker itself keeps: the calls it relays at most, and their input's size. */
export interface RelayLimits {
  innerCalls: number;
  inputChars: number;
  cpuMs: number;
}

/** Gateway → sandbox. */
export type ToSandbox =
  | { type: 'start'; source: string; guard: string; limits: SandboxLimits; relay: RelayLimits }
  | { type: 'answer'; id: number; envelope: string };

/** What the execution module answers once the code settled. */
export interface SandboxAnswer {
  /** The start of the JSON of what the function returned (`null` for undefined), when it returned. */
  result?: string;
  /** The full length of that JSON, of which `result` is the start. */
  resultChars?: number;
  /** What the code threw (or why its result could not be written as JSON). */
  error?: { name: string; message: string };
  logs: string[];
  /** Log lines dropped past the log bounds. */
  logsDropped: number;
  /** The bound the guard stopped the code at, even if the code caught the guard's error. */
  stopped: 'guard_ticks' | 'wall_time_ms' | 'blocking_ms' | null;
}

/** Sandbox → gateway. */
export type FromSandbox =
  | { type: 'running' }
  | {
      type: 'call';
      id: number;
      name: string;
      /** The input as JSON, or null when it could not be written as JSON (`problem` says why) or is too large (`inputChars`). */
      input: string | null;
      problem?: string;
      inputChars?: number;
    }
  | { type: 'end'; answer: SandboxAnswer; callsRefused: number }
  /** The loaded worker failed instead of answering (deployed: Cloudflare's CPU or memory limit); `failure` is its error's message. */
  | { type: 'failed'; failure: string };

/**
 * Close codes of an execution's socket that say why it ended without `end` (4000–4999 are the
 * application's own, RFC 6455): the sandbox host (local) closes with them when it stops or loses
 * the sandbox's process.
 */
export const SANDBOX_CLOSE_CODES = {
  /** The process ran out of memory (V8's heap limit, or the resident-memory bound) or died. */
  memory: 4001,
  /** The process stopped answering health checks: code kept its event loop from turning. */
  blocking: 4002,
  /** The process used more CPU time than an execution may. */
  cpu: 4003,
  /** No sandbox process was free within the wait. */
  busy: 4004,
} as const;

/** Characters of one frame at most: 3 bytes a character in UTF-8 keeps it under 1 MiB. */
export const FRAME_CHARS = 256 * 1024;

/** Frame prefixes: a part with more to come, and the last part. A whole message starts with `{`. */
const MORE = '>';
const LAST = '.';

/** The frames that carry `text` (a JSON object's text): itself when short, else parts that never split a surrogate pair. */
export function toFrames(text: string, frameChars = FRAME_CHARS): string[] {
  if (text.length <= frameChars) return [text];
  const frames: string[] = [];
  let from = 0;
  while (from < text.length) {
    let to = Math.min(text.length, from + frameChars - 1);
    const last = text.charCodeAt(to - 1);
    if (to < text.length && last >= 0xd800 && last <= 0xdbff) to--;
    frames.push((to === text.length ? LAST : MORE) + text.slice(from, to));
    from = to;
  }
  return frames;
}

/** Joins frames back into messages, refusing a message longer than `maxChars`. */
export class Unframer {
  readonly #maxChars: number;
  #parts: string[] = [];
  #length = 0;

  constructor(maxChars: number) {
    this.#maxChars = maxChars;
  }

  /** The whole message `frame` completes, `undefined` while parts are missing; throws on a frame that breaks the rules. */
  push(frame: unknown): string | undefined {
    if (typeof frame !== 'string') throw new Error('a binary frame, where only text frames are sent');
    const kind = frame[0];
    if (kind === '{') {
      if (this.#parts.length > 0) throw new Error('a whole message before the last part of the one in parts');
      if (frame.length > this.#maxChars) throw this.#tooLong();
      return frame;
    }
    if (kind !== MORE && kind !== LAST) throw new Error('a frame that is neither a whole message nor a part of one');
    this.#length += frame.length - 1;
    if (this.#length > this.#maxChars) throw this.#tooLong();
    this.#parts.push(frame.slice(1));
    if (kind === MORE) return undefined;
    const text = this.#parts.join('');
    this.#parts = [];
    this.#length = 0;
    return text;
  }

  #tooLong(): Error {
    return new Error(`a message of more than ${this.#maxChars} characters, the most one may have`);
  }
}
