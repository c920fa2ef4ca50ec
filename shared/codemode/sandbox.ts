/**
 * Running an agent's code in a sandbox: a worker loaded through the Worker Loader binding, with
 * no network (`globalOutbound: null`), no `env`, and one capability, the tool dispatcher it is
 * handed over RPC. Each execution loads a worker of its own, so nothing one execution does to its
 * globals (prototypes included) reaches another.
 *
 * Worker Loader is used directly rather than through @cloudflare/codemode's DynamicWorkerExecutor,
 * which this module follows closely, because the executor falls short here: it sets no `limits`
 * (so a deployed sandbox would get no CPU limit of its own), it keeps every log line (unbounded
 * memory in the sandbox), it splices the code into its own class (so a syntax error fails the load
 * instead of being named) and it has no room for the loop guard (./guard.ts). Its type generation
 * and result truncation are used as they are (./types.ts, ./run.ts).
 */
import type { WorkerLoaderBinding } from '../runtime/env.ts';
import { CODE_MODE_LIMITS } from './limits.ts';

/** The sandbox's compatibility date: the gateway's own (wrangler.toml), never newer than the bundled workerd supports. */
const SANDBOX_COMPATIBILITY_DATE = '2026-10-01';

/** What the sandbox answers: the result as JSON, or the exception thrown, with the bounded logs. */
export interface SandboxAnswer {
  /** The JSON of what the function returned (`null` for undefined), when it returned. */
  result?: string;
  /** Characters of a result too large to hand back at all (over `transferChars`). */
  tooLarge?: number;
  /** What the code threw (or why its result could not be serialised). */
  error?: { name: string; message: string };
  logs: string[];
  /** Log lines dropped past the log bounds. */
  logsDropped: number;
  /** The limit the guard stopped the code at, even if the code caught the guard's error. */
  stopped: 'guard_ticks' | 'wall_time_ms' | 'blocking_ms' | null;
}

/** How a sandbox run ended without an answer from the sandbox: too slow, or the sandbox failed (deployed: its CPU limit). */
export type SandboxEnd =
  { ok: true; answer: SandboxAnswer } | { ok: false; reason: 'wall_time' } | { ok: false; reason: 'sandbox_failed'; message: string };

/** What the sandbox may call, over RPC: one function answering a tool call with its envelope as JSON text. */
export type DispatcherStub = (name: string, inputJson: string | null, problem?: string) => Promise<string>;

/** The settings the sandbox reads, passed to it with each run. */
type SandboxLimits = Pick<
  typeof CODE_MODE_LIMITS,
  'guardTicks' | 'blockingMs' | 'logLines' | 'logChars' | 'transferChars' | 'allocation'
> & { wallTimeMs: number };

/**
 * Runs `source` (an instrumented async arrow function whose guard is named `guard`, see
 * ./guard.ts) in a fresh sandbox loaded by `loader`, handing it `dispatcher`. Answers once the
 * code settled, or at `wallTimeMs`.
 */
export async function runInSandbox(
  loader: WorkerLoaderBinding,
  { source, guard, dispatcher, wallTimeMs }: { source: string; guard: string; dispatcher: DispatcherStub; wallTimeMs: number },
): Promise<SandboxEnd> {
  const limits: SandboxLimits = {
    guardTicks: CODE_MODE_LIMITS.guardTicks,
    blockingMs: CODE_MODE_LIMITS.blockingMs,
    logLines: CODE_MODE_LIMITS.logLines,
    logChars: CODE_MODE_LIMITS.logChars,
    transferChars: CODE_MODE_LIMITS.transferChars,
    allocation: CODE_MODE_LIMITS.allocation,
    wallTimeMs,
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const worker = loader.load({
    compatibilityDate: SANDBOX_COMPATIBILITY_DATE,
    mainModule: 'execution.js',
    modules: { 'execution.js': EXECUTION_MODULE, 'agent.js': `export default (${guard}, tools, console) => (${source});\n` },
    // No network and no bindings: the dispatcher, passed as an argument, is the only capability.
    globalOutbound: null,
    env: {},
    // Enforced by Cloudflare when deployed; workerd enforces neither locally, hence the guard.
    limits: { cpuMs: CODE_MODE_LIMITS.cpuMs },
  });
  const entrypoint = worker.getEntrypoint() as {
    evaluate(dispatcher: DispatcherStub, limits: SandboxLimits): Promise<SandboxAnswer>;
  } & Partial<Disposable>;
  try {
    const timedOut = new Promise<SandboxEnd>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, reason: 'wall_time' }), wallTimeMs);
    });
    const answered = entrypoint.evaluate(dispatcher, limits).then(
      (answer): SandboxEnd => ({ ok: true, answer }),
      (error: unknown): SandboxEnd => ({
        ok: false,
        reason: 'sandbox_failed',
        message: error instanceof Error ? error.message : String(error),
      }),
    );
    return await Promise.race([answered, timedOut]);
  } finally {
    clearTimeout(timer);
    // Native handles are released now rather than left to the collector (as the codemode executor does).
    try {
      entrypoint[Symbol.dispose]?.();
    } catch {
      // Disposal never masks the answer.
    }
  }
}

/**
 * The sandbox's main module. `evaluate` keeps its state (the guard's count, the logs) in its own
 * scope: the agent's code lives in another module (agent.js) and sees only the guard, `tools` and
 * `console` it is handed. Tool inputs and envelopes cross as JSON text, so no object of the sandbox
 * reaches the host and none of the host's reaches the sandbox.
 */
const EXECUTION_MODULE = String.raw`
import { WorkerEntrypoint } from "cloudflare:workers";
import agent from "./agent.js";

export default class CodeExecution extends WorkerEntrypoint {
  async evaluate(dispatcher, limits) {
    capAllocations(limits.allocation);
    // The guard counts; every 1024 counts it also reads the clock, where the clock moves during
    // synchronous code (it does under wrangler dev; where it does not, the count still holds). A
    // timer beats while the event loop turns: code that keeps it from turning (a synchronous loop,
    // or one of microtasks) for blockingMs holds up every other request of a local workerd.
    // Taken before the code runs: the code may replace the globals, never these.
    const now = Date.now.bind(Date);
    const schedule = setTimeout.bind(globalThis);
    const unschedule = clearTimeout.bind(globalThis);
    let ticks = 0;
    let stopped = null;
    const deadline = now() + limits.wallTimeMs;
    let beat = now();
    let heartbeat;
    const beating = () => { beat = now(); heartbeat = schedule(beating, 100); };
    beating();
    const guard = () => {
      if (stopped === null) {
        if (++ticks > limits.guardTicks) stopped = "guard_ticks";
        else if ((ticks & 1023) !== 0) return;
        else if (now() > deadline) stopped = "wall_time_ms";
        else if (now() - beat > limits.blockingMs) stopped = "blocking_ms";
        else return;
      }
      throw new RangeError(MESSAGES[stopped](limits));
    };
    const logs = [];
    let logChars = 0;
    let logsDropped = 0;
    const format = (value) => {
      if (typeof value === "string") return value;
      try { return JSON.stringify(value) ?? String(value); } catch { try { return String(value); } catch { return "[unprintable]"; } }
    };
    const writer = (prefix) => (...args) => {
      if (logs.length >= limits.logLines || logChars >= limits.logChars) { logsDropped++; return; }
      const line = (prefix + args.map(format).join(" ")).slice(0, limits.logChars - logChars);
      logChars += line.length;
      logs.push(line);
    };
    const sandboxConsole = Object.freeze({ log: writer(""), info: writer(""), debug: writer(""), warn: writer("[warn] "), error: writer("[error] ") });
    for (const name of ["log", "info", "debug", "warn", "error", "trace", "dir", "table"]) {
      try { globalThis.console[name] = sandboxConsole[name] ?? sandboxConsole.log; } catch {}
    }
    const call = async (name, input) => {
      let json;
      try { json = JSON.stringify(input === undefined ? {} : input); } catch (error) {
        return JSON.parse(await dispatcher(name, null, describe(error).message));
      }
      return JSON.parse(await dispatcher(name, json ?? null, json === undefined ? "the input is not a JSON value" : undefined));
    };
    const tools = new Proxy(Object.create(null), {
      get: (_target, name) => (typeof name === "string" && name !== "then" ? (input) => call(name, input) : undefined),
      set: () => false,
      defineProperty: () => false,
      deleteProperty: () => false,
      setPrototypeOf: () => false,
    });
    const answer = (fields) => {
      unschedule(heartbeat);
      return { ...fields, logs, logsDropped, stopped };
    };
    let value;
    try {
      value = await agent(guard, tools, sandboxConsole)();
    } catch (error) {
      return answer({ error: describe(error) });
    }
    let json;
    try {
      json = JSON.stringify(value === undefined ? null : value) ?? "null";
    } catch (error) {
      return answer({ error: { name: "TypeError", message: "The value the function returned cannot be written as JSON: " + describe(error).message } });
    }
    if (json.length > limits.transferChars) return answer({ tooLarge: json.length });
    return answer({ result: json });
  }
}

// Memory, where workerd enforces no limit of its own (locally): the builtins that allocate much in
// one call refuse more than the cap. Best effort; deployed, Cloudflare's memory limit holds.
function capAllocations(cap) {
  const refuse = (what, n) => {
    throw new RangeError(what + " of " + n + " is more than the " + cap + " one execution may allocate at once.");
  };
  const check = (what, n) => { if (typeof n === "number" && n > cap) refuse(what, n); };
  const wrapMethod = (proto, name, size) => {
    const original = proto[name];
    Object.defineProperty(proto, name, { value: function (...args) { check("A result", size(this, args)); return original.apply(this, args); }, writable: true, configurable: true });
  };
  wrapMethod(String.prototype, "repeat", (s, [count]) => String(s).length * Number(count));
  wrapMethod(String.prototype, "padStart", (_s, [length]) => Number(length));
  wrapMethod(String.prototype, "padEnd", (_s, [length]) => Number(length));
  wrapMethod(Array.prototype, "fill", (a) => a.length);
  wrapMethod(Array.prototype, "concat", (a, args) => args.reduce((sum, item) => sum + (Array.isArray(item) ? item.length : 1), a.length));
  wrapMethod(Array.prototype, "join", (a, [separator]) => a.length * Math.max(1, String(separator ?? ",").length));
  const arrayFrom = Array.from;
  Array.from = function (source, ...rest) { check("An array", source?.length); return arrayFrom.call(this, source, ...rest); };
  const guardConstructor = (name, bytes) => {
    const Original = globalThis[name];
    if (typeof Original !== "function") return;
    const size = (args) => (typeof args[0] === "number" ? args[0] * bytes : undefined);
    const Capped = new Proxy(Original, {
      construct: (target, args, newTarget) => { check("new " + name, size(args)); check("new " + name, args[1]?.maxByteLength); return Reflect.construct(target, args, newTarget === Capped ? target : newTarget); },
      apply: (target, self, args) => { check(name, size(args)); return Reflect.apply(target, self, args); },
    });
    Object.defineProperty(Original.prototype, "constructor", { value: Capped, writable: true, configurable: true });
    globalThis[name] = Capped;
  };
  guardConstructor("Array", 1);
  guardConstructor("ArrayBuffer", 1);
  guardConstructor("SharedArrayBuffer", 1);
  for (const name of ["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array", "Float16Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"]) {
    guardConstructor(name, globalThis[name]?.BYTES_PER_ELEMENT ?? 8);
  }
}

const MESSAGES = {
  guard_ticks: (limits) => "The code was stopped after " + limits.guardTicks + " loop iterations and function calls, the most one execution may run.",
  wall_time_ms: (limits) => "The code was stopped after " + limits.wallTimeMs + " ms, the most one execution may take.",
  blocking_ms: (limits) => "The code was stopped after running " + limits.blockingMs + " ms without ever letting other work run (no await of a tool call or a timer).",
};

function describe(error) {
  try {
    if (error instanceof Error) return { name: String(error.name).slice(0, 100), message: String(error.message).slice(0, 2000) };
    return { name: typeof error, message: String(error).slice(0, 2000) };
  } catch {
    return { name: "unknown", message: "a value that cannot be described" };
  }
}
`;
