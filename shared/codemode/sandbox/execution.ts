/**
 * The execution module: the main module of the worker the sandbox loads for one execution
 * (bundled into ./module.ts by `npm run build:sandbox`). `evaluate` caps allocations, starts the
 * guard, hands the agent's function (./agent.d.ts) its guard, `tools` and a bounded console, runs
 * it, and answers its result's JSON (the start of it, with its length) or what it threw, with the
 * logs and the bound the guard stopped it at.
 *
 * The agent's code runs in this isolate and may replace any global or prototype's method, so after
 * this module is evaluated it uses only the builtins ./builtins.ts took then. Tool inputs and
 * envelopes cross as JSON text: no object of the gateway reaches the code, none of the code's leaves.
 */
import { WorkerEntrypoint } from 'cloudflare:workers';
import type { SandboxAnswer, SandboxLimits } from '../protocol.ts';
import agent from './agent.js';
import { capAllocations } from './allocations.ts';
import { create, describe, parse, ProxyConstructor, sliceString, stringify } from './builtins.ts';
import { createConsole } from './console.ts';
import { createGuard } from './guard.ts';

/** The one capability the code has: answers a tool call with its envelope as JSON text (over RPC, from the sandbox worker). */
export type Dispatcher = (name: string, input: string | null, problem?: string) => Promise<string>;

/** The loaded worker's entrypoint, which the sandbox worker calls over RPC. */
export default class CodeExecution extends WorkerEntrypoint {
  async evaluate(dispatcher: Dispatcher, limits: SandboxLimits): Promise<SandboxAnswer> {
    capAllocations(limits.allocation, globalThis);
    const guard = createGuard(limits);
    const bounded = createConsole(limits);
    for (const name of ['log', 'info', 'debug', 'warn', 'error', 'trace', 'dir', 'table'] as const) {
      try {
        (globalThis as unknown as { console: Record<string, unknown> }).console[name] =
          (bounded.console as Record<string, unknown>)[name] ?? bounded.console.log;
      } catch {
        // A console that cannot be replaced writes nowhere the answer reads.
      }
    }
    const call = async (name: string, input: unknown): Promise<unknown> => {
      let json: string | undefined;
      try {
        json = stringify(input === undefined ? {} : input);
      } catch (error) {
        return parse(await dispatcher(name, null, describe(error).message));
      }
      return parse(await dispatcher(name, json ?? null, json === undefined ? 'the input is not a JSON value' : undefined));
    };
    const tools = new ProxyConstructor(
      create(null) as object,
      {
        __proto__: null,
        get: (_target: object, name: string | symbol) =>
          typeof name === 'string' && name !== 'then' ? (input: unknown) => call(name, input) : undefined,
        set: () => false,
        defineProperty: () => false,
        deleteProperty: () => false,
        setPrototypeOf: () => false,
      } as ProxyHandler<object>,
    );
    const answer = (fields: Pick<SandboxAnswer, 'result' | 'resultChars' | 'error'>): SandboxAnswer => {
      guard.end();
      return { ...fields, logs: bounded.logs, logsDropped: bounded.dropped(), stopped: guard.stopped() };
    };

    let value: unknown;
    try {
      value = await agent(guard.tick, tools, bounded.console)();
    } catch (error) {
      return answer({ error: describe(error) });
    }
    let json: string | undefined;
    try {
      json = stringify(value === undefined ? null : value);
    } catch (error) {
      return answer({
        error: { name: 'TypeError', message: `The value the function returned cannot be written as JSON: ${describe(error).message}` },
      });
    }
    json ??= 'null';
    return answer({ result: sliceString(json, 0, limits.resultHandedBackChars), resultChars: json.length });
  }
}
