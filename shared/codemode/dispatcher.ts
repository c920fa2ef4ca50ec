/**
 * The gateway's side of `tools[...]()`: each call the code makes arrives here from the sandbox
 * (./sandbox.ts), is bounded (how many one execution makes, how many run at once, none once the
 * execution has answered) and handed to `run` (the pipeline, under the caller's scope: ./run.ts).
 * Every answer is an envelope as JSON text: failures are values the code branches on, never exceptions.
 */
import { envelope, fail, metaWithoutExecution, type Failure, type Meta, type Outcome } from '../core/contract.ts';
import { closestNames, didYouMean } from '../core/suggest.ts';
import type { AnyTool } from '../core/tool.ts';
import { nestsDeeperThan } from './cut-json.ts';

/**
 * Levels of nesting a call's input may have before the gateway parses it: the pipeline's own
 * screening refuses far less deep inputs with its own message (shared/core/validation.ts); this
 * keeps what the gateway walks recursively (an idempotency key's canonical JSON) off deep inputs.
 */
const MAX_INPUT_DEPTH = 1_000;

/** One tool call the code made, as the execution's answer lists it (`data.calls`). */
export interface InnerCallEntry {
  tool: string;
  trace_id: string;
  success: boolean;
  /** The error code, on failure. */
  error_code?: string;
  /** The error's message, on failure, cut to {@link ERROR_MESSAGE_CHARS} characters. */
  error_message?: string;
  /** True when the answer was an earlier call's, replayed for its idempotency key. */
  replayed?: true;
}

/** Runs one inner call: the tool, its input as parsed, and its position among the execution's calls (from 0). */
export type RunInnerCall = (tool: AnyTool, input: unknown, position: number) => Promise<{ outcome: Outcome<unknown>; meta: Meta }>;

/** Options of {@link InnerCalls}. */
export interface InnerCallsOptions {
  /** Every tool of the gateway; a name is a tool's id or its camelCase alias. */
  tools: readonly AnyTool[];
  /** Whether the caller may call a tool: the others are left out of suggestions (calling one still gets the pipeline's refusal). */
  callable: (tool: AnyTool) => boolean;
  run: RunInnerCall;
  /** The most calls of one execution, and the most running at once. */
  maxCalls: number;
  maxConcurrent: number;
  /** Characters of one call's input as JSON. */
  maxInputChars: number;
}

/** The calls of one execution: bounded, listed in the order they were made, and closed once it answered. */
export class InnerCalls {
  /** Every call made, in order, as the answer lists them. */
  readonly entries: InnerCallEntry[] = [];
  /** Calls refused, without being listed, because the execution had made as many as it may. */
  overLimit = 0;
  readonly #options: InnerCallsOptions;
  readonly #byName: Map<string, AnyTool>;
  readonly #pending = new Set<Promise<unknown>>();
  readonly #waiting: (() => void)[] = [];
  #running = 0;
  #made = 0;
  #closed = false;

  constructor(options: InnerCallsOptions) {
    this.#options = options;
    this.#byName = new Map(options.tools.flatMap((tool) => [[tool.id, tool] as const, [camelCase(tool.id), tool] as const]));
  }

  /**
   * Answers one call of the code with an envelope, as JSON text. `inputJson` is null when the input
   * could not be written as JSON (`problem` says why) or was too large to send (`inputChars`).
   */
  async call(
    name: string,
    inputJson: string | null,
    { problem, inputChars }: { problem?: string; inputChars?: number } = {},
  ): Promise<string> {
    const label = name.slice(0, 100);
    if (this.#closed)
      return refusedAnswer(
        label,
        fail(
          'VALIDATION_ERROR',
          `The call of '${label}' came after the code had already answered, so it did not run. Await every tool call before returning.`,
          { details: { reason: 'after_answer' } },
        ),
      );
    if (this.#made >= this.#options.maxCalls) {
      this.overLimit++;
      return overCallLimit(label, this.#options.maxCalls);
    }
    const position = this.#made++;
    const tool = this.#byName.get(name);
    if (!tool) return this.#refuse(label, this.#unknownTool(label));
    const size = inputJson?.length ?? inputChars;
    if (size !== undefined && size > this.#options.maxInputChars)
      return this.#invalid(tool, `its input is ${size} characters as JSON, over the ${this.#options.maxInputChars} one call may take`);
    if (inputJson === null) return this.#invalid(tool, `its input cannot be written as JSON (${problem ?? 'unknown reason'})`);
    if (nestsDeeperThan(inputJson, MAX_INPUT_DEPTH)) return this.#invalid(tool, `its input nests more than ${MAX_INPUT_DEPTH} levels deep`);
    let input: unknown;
    try {
      input = JSON.parse(inputJson);
    } catch {
      return this.#invalid(tool, 'its input is not JSON');
    }
    const work = this.#runBounded(tool, input, position);
    this.#pending.add(work);
    try {
      return await work;
    } finally {
      this.#pending.delete(work);
    }
  }

  /** Refuses every later call: the code has answered. */
  close(): void {
    this.#closed = true;
  }

  /** Settles once every call already running has answered (they are real calls, and may be writing). */
  async settled(): Promise<void> {
    while (this.#pending.size) await Promise.allSettled([...this.#pending]);
  }

  async #runBounded(tool: AnyTool, input: unknown, position: number): Promise<string> {
    const entry: InnerCallEntry = { tool: tool.id, trace_id: '', success: false };
    this.entries.push(entry);
    while (this.#running >= this.#options.maxConcurrent) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#running++;
    try {
      const { outcome, meta } = await this.#options.run(tool, input, position).catch((error: unknown) => ({
        outcome: fail('UNKNOWN_ERROR', `The call of '${tool.id}' failed in the gateway: ${(error as Error).message}`),
        meta: metaWithoutExecution(tool.id),
      }));
      Object.assign(
        entry,
        { trace_id: meta.trace_id, success: outcome.ok },
        !outcome.ok && { error_code: outcome.error.code, error_message: bounded(outcome.error.message) },
        meta.replayed && { replayed: true },
      );
      return JSON.stringify(envelope(outcome, meta));
    } finally {
      this.#running--;
      this.#waiting.shift()?.();
    }
  }

  /** Answers a call that did not run (an unknown tool, an input out of bounds), and lists it. */
  #refuse(tool: string, failure: Failure): string {
    const meta = metaWithoutExecution(tool);
    this.entries.push({
      tool,
      trace_id: meta.trace_id,
      success: false,
      error_code: failure.error.code,
      error_message: bounded(failure.error.message),
    });
    return JSON.stringify(envelope(failure, meta));
  }

  /** {@link #refuse} for an input that cannot be the tool's: `why` it did not run. */
  #invalid(tool: AnyTool, why: string): string {
    return this.#refuse(tool.id, fail('VALIDATION_ERROR', `The call of '${tool.id}' did not run: ${why}.`, { hint: tool.hint }));
  }

  #unknownTool(name: string): Failure {
    const ids = this.#options.tools.filter(this.#options.callable).map((tool) => tool.id);
    const suggestions = closestNames(name, ids);
    return fail('UNKNOWN_TOOL', `There is no tool '${name}'.${didYouMean(suggestions)} Tools: ${ids.join(', ')}.`, {
      hint: `Call a tool by its id or its camelCase name: tools["${suggestions[0] ?? ids[0] ?? 'tool-id'}"](input) or tools.${camelCase(suggestions[0] ?? ids[0] ?? 'tool-id')}(input).`,
      details: { available_tools: ids, ...(suggestions.length && { suggestions }) },
    });
  }
}

/** Characters of a failed call's message kept in its entry: enough to say what was wrong. */
const ERROR_MESSAGE_CHARS = 300;

function bounded(message: string): string {
  return message.length > ERROR_MESSAGE_CHARS ? `${message.slice(0, ERROR_MESSAGE_CHARS - 1)}…` : message;
}

/** A tool id's camelCase alias: `semantic-search` → `semanticSearch`. */
export function camelCase(id: string): string {
  return id.replace(/-([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

/**
 * The answer of a call past the most one execution may make (`maxCalls`), as JSON text: given here,
 * and by the sandbox worker to the calls it does not relay.
 */
export function overCallLimit(label: string, maxCalls: number): string {
  return refusedAnswer(
    label,
    fail(
      'RATE_LIMITED',
      `The code already made ${maxCalls} tool calls, the most one execution may make, so this call of '${label}' did not run.`,
      {
        hint: 'Do fewer calls in one execution (a tool that takes a list, or a narrower query), or split the work over several executions.',
        retryable: false,
        details: { reason: 'inner_call_limit', limit: maxCalls },
      },
    ),
  );
}

/** The answer of a call that did not run, as the JSON text the code receives: `failure` in the envelope, for `tool`. */
export function refusedAnswer(tool: string, failure: Failure): string {
  return JSON.stringify(envelope(failure, metaWithoutExecution(tool)));
}
