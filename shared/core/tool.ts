/**
 * A tool is defined once with {@link defineTool} and served unchanged by the gateway (all tools)
 * and by its own worker. A tool sees only its validated input and a {@link ToolContext}: never
 * Hono, `env`, Redis or tracing.
 */
import * as z from 'zod';
import type { Failure, Outcome } from './contract.ts';
import type { Links } from './links.ts';
import type { Toolset } from './toolsets.ts';
import type { Database } from './database.ts';
import type { Providers } from './providers.ts';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_META_KEY, KEY_TTL_HOURS } from './idempotency-key.ts';
import { nullableOptionalFields } from './validation.ts';

/** The tenant, resolved from the API key; never from tool input. */
export interface Project {
  id: string;
  name: string;
}

/** Everything a tool may use while it executes. */
export interface ToolContext {
  db: Database;
  project: Project;
  /**
   * Embeddings and dependency detection, as configured, for a tool whose definition names
   * `providers`. Built on first use: reading it in a deployment whose provider settings are wrong
   * throws, and the call answers CONFIG_ERROR.
   */
  readonly providers: Providers;
  /** Aborted when the call is abandoned (client gone, lease lost): stop work early. */
  signal: AbortSignal;
  traceId: string;
  /** Links to the records the answer references, as the deployment configured them. */
  links: Links;
  /**
   * An id derived from this call and `purpose` (e.g. 'document', 'row', `task:${n}`): the same on
   * every attempt of the call, so a write tool retried after its answer was lost writes (and
   * recognises) the same rows instead of new ones. Different for every other call.
   */
  idFor(purpose: string): Promise<string>;
  /**
   * Tells the caller how far a long call is: `done` of `total` (when known), with an optional
   * short `message`. Forwarded when the transport can (MCP clients that send a `progressToken`);
   * otherwise it does nothing. Values that do not increase are dropped.
   */
  progress(done: number, total?: number, message?: string): void;
}

type InputSchema = z.ZodObject<z.ZodRawShape, z.core.$strict>;

/**
 * What calling a tool does to the world, stated truthfully for clients that ask before calling
 * (MCP tool annotations; the catalog carries the same facts).
 */
export interface ToolAnnotations {
  /** It only reads: calling it changes nothing. */
  readOnlyHint: boolean;
  /** It may delete or overwrite what exists (meaningful when not read-only). */
  destructiveHint: boolean;
  /** Repeating the same call has no further effect (meaningful when not read-only). */
  idempotentHint: boolean;
  /** It reaches beyond the project's own data (the web, third parties). */
  openWorldHint: boolean;
}

/** Annotations of a tool that only reads the project's data. */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export interface ToolDefinition<I extends InputSchema, O extends z.ZodType, Id extends string = string> {
  /** Kebab-case id; also the tool's file name and its route (`POST /tools/<id>`). */
  id: Id;
  /** The toolset it belongs to: the folder its file is in (functions/<toolset>/<id>.ts). */
  toolset: Toolset;
  /** A short human title, e.g. "Semantic search" (MCP `title`, the catalog, OpenAPI `summary`). */
  title: string;
  /** What calling it does: read-only, destructive, idempotent, open world. */
  annotations: ToolAnnotations;
  /** What the tool does and when to use it, written for the model that chooses tools. */
  description: string;
  /**
   * A strict object schema, its fields from the builders of fields.ts (text, ids, date-times,
   * JSON), so that the advertised JSON Schema states what is enforced. Written as a getter
   * (`get input() { return z.strictObject({...}); }`) in a registered tool: {@link defineTool}
   * reads it once, when the tool is first needed, so that loading the gateway builds no schema.
   */
  input: I;
  /** The shape of `data` on success; a getter too, read once on first use. */
  output: O;
  /** A valid input, shown to callers as the example of a valid call. */
  example: z.input<I>;
  /**
   * How its `context.providers` are built, for a tool that uses them: `providersFromEnv` from
   * shared/providers/index.ts. Named here rather than built by the pipeline so that the worker of
   * a tool without providers does not bundle them.
   */
  providers?: (env: Record<string, unknown>) => Providers;
  execute(input: z.output<I>, context: ToolContext): Promise<Outcome<z.output<O>>>;
}

export interface JsonSchemas {
  input: Record<string, unknown>;
  output: Record<string, unknown>;
}

export interface Tool<
  I extends InputSchema = InputSchema,
  O extends z.ZodType = z.ZodType,
  Id extends string = string,
> extends ToolDefinition<I, O, Id> {
  /** Set when the tool cannot run because its configuration is broken; answered as is. */
  unavailable?: Failure;
  /**
   * Whether the tool honours an idempotency key: every tool that is not read-only. Its description
   * says so (a sentence is appended to the definition's), and so does the catalog.
   */
  readonly acceptsIdempotencyKey: boolean;
  /**
   * The definition's description alone, for MCP: there the client, not the model, sends an
   * idempotency key, and the server's instructions say how once for every tool.
   */
  readonly purpose: string;
  /** "Example of a valid call: {...}", shown with every validation error. */
  readonly hint: string;
  /**
   * Input and output JSON Schemas, generated from the zod schemas on first use. The input schema
   * states every rule validateInput enforces, null for an optional field included.
   */
  jsonSchemas(): JsonSchemas;
}

/** Any registered tool, whatever its schemas. */
// `any`, not `unknown`: a tool's execute takes its own input type, which `unknown` would not accept.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = Tool<any, any>;

/** A tool id: kebab-case, e.g. 'log-mood' (the tool's route, its MCP name and its worker's name). */
export const TOOL_ID_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/** Appended to the description of every tool that accepts an idempotency key. */
export const IDEMPOTENCY_NOTE = `Retry safely with an idempotency key (header ${IDEMPOTENCY_HEADER}; MCP _meta "${IDEMPOTENCY_META_KEY}"): the same key and input within ${KEY_TTL_HOURS} h answer the first call again.`;

/**
 * The idempotency note once for a whole list of tools, for the developer who calls them (the
 * OpenAI and Gemini exports' messages): a model choosing a function has no use for it.
 */
export const IDEMPOTENCY_NOTE_FOR_ALL = `Every tool that writes takes an idempotency key (header ${IDEMPOTENCY_HEADER}): the same key and input within ${KEY_TTL_HOURS} h answer the first call again.`;

/**
 * Defines a tool. Its metadata is read at once; its `input` and `output` schemas (getters in the
 * definition) and their JSON Schemas are built on first use and kept: a worker that serves many
 * tools starts without building any of them.
 *
 * @example
 * export default defineTool({
 *   id: 'echo',
 *   toolset: 'documents',
 *   title: 'Echo',
 *   annotations: READ_ONLY,
 *   description: 'Repeats a text back.',
 *   get input() {
 *     return z.strictObject({ text: text({ max: 100 }) });
 *   },
 *   get output() {
 *     return z.object({ text: z.string() });
 *   },
 *   example: { text: 'hello' },
 *   async execute(input) { return ok({ text: input.text }, `Echoed ${input.text.length} characters.`); },
 * });
 */
export function defineTool<I extends InputSchema, O extends z.ZodType, const Id extends string>(
  definition: ToolDefinition<I, O, Id> & { unavailable?: Failure },
): Tool<I, O, Id> {
  const { id, toolset, title, annotations, description, example, providers, execute, unavailable } = definition;
  if (!TOOL_ID_PATTERN.test(id)) {
    throw new Error(`Tool id '${id}' must be kebab-case (e.g. 'log-mood').`);
  }
  let input: I | undefined;
  let output: O | undefined;
  let schemas: JsonSchemas | undefined;
  const acceptsIdempotencyKey = !annotations.readOnlyHint;
  // Once only, when a tool is defined again from another's definition.
  const noted = !acceptsIdempotencyKey || description.endsWith(IDEMPOTENCY_NOTE);
  const tool: Tool<I, O, Id> = {
    id,
    toolset,
    title,
    annotations,
    description: noted ? description : `${description} ${IDEMPOTENCY_NOTE}`,
    purpose: noted && acceptsIdempotencyKey ? description.slice(0, -IDEMPOTENCY_NOTE.length - 1) : description,
    acceptsIdempotencyKey,
    example,
    hint: `Example of a valid call: ${JSON.stringify(example)}`,
    ...(providers ? { providers } : {}),
    ...(unavailable ? { unavailable } : {}),
    execute,
    get input() {
      return (input ??= definition.input);
    },
    get output() {
      return (output ??= definition.output);
    },
    jsonSchemas() {
      schemas ??= {
        input: z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any', override: nullableOptionalFields }),
        output: z.toJSONSchema(tool.output, { io: 'output', unrepresentable: 'any' }),
      };
      return schemas;
    },
  };
  return tool;
}
