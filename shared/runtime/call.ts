/**
 * What the pipeline (./pipeline.ts) is handed and runs, apart from how it runs it: a call as a
 * transport hands it over ({@link ToolCall}), what it runs ({@link Work}: a tool, or code mode's
 * execution), what that work runs with ({@link RunContext}), and the options of every call.
 */
import type { Parsed } from '../core/body.ts';
import type { Failure, Meta, Outcome } from '../core/contract.ts';
import type { Database } from '../core/database.ts';
import type { Links } from '../core/links.ts';
import type * as z from 'zod';
import type { Caller } from '../auth/caller.ts';
import type { Gate, Judge } from '../auth/gate.ts';
import type { RequestScope } from './env.ts';

/** Options of the pipeline, the same for every call a worker serves. */
export interface PipelineOptions {
  /** Executions slower than this still complete, with `meta.performance_warning: true`. */
  slowCallMs?: number;
  /** Retries of transient failures, and the fixed delay before each. */
  retries?: number;
  retryDelayMs?: number;
  /**
   * How long a write tool whose retries ran out on a transient database failure keeps being run
   * again (the delay doubling up to 8 s) until the database answers: its attempts are idempotent,
   * so the next one that gets through answers what was done, an earlier commit whose answer was
   * lost included. Past it, the call answers that its write is not confirmed and names the key to
   * repeat it with (see writeUnconfirmed). Reads keep the plain retries.
   */
  settleWritesMs?: number;
}

/** Default of {@link PipelineOptions}.slowCallMs. */
export const DEFAULT_SLOW_CALL_MS = 5_000;

/**
 * Default of {@link PipelineOptions}.settleWritesMs: 40 s, which with the retries before it stays
 * under the minute most MCP clients wait for an answer.
 */
export const DEFAULT_SETTLE_WRITES_MS = 40_000;

/**
 * One call as a transport (HTTP, MCP) hands it to the pipeline: what was sent, read the
 * transport's way. What the transport offers the tool while it runs belongs here too.
 */
export interface ToolCall {
  /** Reads and screens the raw input; `hint` is the example of a valid call for error messages. */
  readInput(hint: string): Promise<Parsed<Record<string, unknown>>>;
  /** Aborts when the caller goes away. */
  signal: AbortSignal;
  /** The idempotency key the call was sent with, as the transport read it (shared/runtime/idempotency.ts). */
  idempotencyKey?: Parsed<string>;
  /** The caller's W3C `traceparent`, if any: the execution becomes a span of the caller's trace. */
  traceparent?: string | null;
  /** The model's own id of this tool call, if the client sent one: the span's `gen_ai.tool.call.id`. */
  toolCallId?: string;
  /** The origin the request came to (`https://edge-tools.example.workers.dev`): links are absolute. */
  origin: string;
  /**
   * Where the tool's progress goes, when the transport can tell the caller (MCP with a
   * `progressToken`). Called only with values that increase: a retried attempt starting again
   * from zero is not reported until it passes what was already reported.
   */
  onProgress?: (progress: Progress) => void;
  /** For a call made by code mode's code (shared/codemode/): the trace id of that code's execution, which its trace rows name. */
  parentExecutionId?: string;
}

/** A tool's progress as the transport forwards it: `progress` of `total` (when known) done. */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** The outcome of a call and the meta of its envelope. */
export interface CallResult {
  outcome: Outcome<unknown>;
  meta: Meta;
}

/**
 * What a call runs, as the pipeline sees it: a tool ({@link callTool}), or code mode's execution
 * of an agent's code (shared/codemode/run.ts). Both pass the same stages; these say how.
 */
export interface Work {
  /** The name its meta, trace rows and span carry: the tool's id, or `code`. */
  id: string;
  /** What it is, for its span. */
  description: string;
  /** Its strict input schema, and the example of a valid call its refusals show. */
  input: z.ZodType;
  hint: string;
  /** Why the caller may not run it, judged on the caller as last verified and again, by the gate, once it is confirmed. */
  denied: Judge;
  /** It changes state: it runs only once the gate has passed. Otherwise it runs alongside the credential's confirmation, and its answer waits for it. */
  writes: boolean;
  /** It holds a slot of the global semaphore while it runs (a tool); otherwise it passes the rate limit only (code mode: its calls take slots). */
  holdsSlot: boolean;
  /**
   * What its idempotency key does: `claim`ed before it runs, its answer stored (a tool that
   * writes); `forward`ed to it (code mode derives its calls' keys from it); or `ignore`d (a tool
   * that only reads: repeating it changes nothing).
   */
  key: 'claim' | 'forward' | 'ignore';
  /** Transient failures are retried (a tool); code mode's calls retry on their own. */
  retries: boolean;
  /** Set when it cannot run because its configuration is broken; answered as is. */
  unavailable?: Failure;
  /**
   * Reads the validated input further before anything runs (code mode parses the code): what
   * `run` gets, or a refusal (a syntax error is one, as a schema's is).
   */
  prepare?(input: unknown): Parsed<unknown>;
  /** Runs it once, with its input as validated (and prepared). */
  run(input: unknown, context: RunContext): Promise<Outcome<unknown>>;
}

/** What a {@link Work} runs with. */
export interface RunContext {
  /** The database: the client that writes once the gate passed (work that writes), else the read-only one. */
  db: Database;
  /** The caller as confirmed by the gate (work that writes), else as last verified. */
  caller: Caller;
  /** The request's gate: code mode's calls pass it each. */
  gate: Gate;
  call: ToolCall;
  scope: RequestScope;
  options: Required<PipelineOptions>;
  traceId: string;
  /** The `traceparent` that makes a call made during this one a child of its span. */
  childTraceparent: string;
  links: Links;
  /** The idempotency key the call was sent with, when well formed. */
  key?: string;
  idFor(purpose: string): Promise<string>;
  /** Tells the caller how far the call is (see ToolContext.progress): only values that increase, over every attempt. */
  progress(done: number, total?: number, message?: string): void;
  /** Says in the answer's meta that it repeats answers stored for the key (code mode: every write replayed). */
  markReplayed(): void;
}
