/**
 * The envelope of shared/core/contract.ts as JSON Schema, for the OpenAPI document's responses. The parts are written in zod, checked at compile time against the contract's types,
 * and a tool's `data` is its own output schema, as the catalog advertises it.
 */
import * as z from 'zod';
import { ERROR_STATUS, type ErrorCode, type Link, type Meta, type ToolError } from '../core/contract.ts';
import { warningSchema } from '../core/warning-schema.ts';
import type { JsonSchema } from './compact-schema.ts';

const fieldErrorSchema = z.object({
  field: z.string().describe('The offending field, as a path (e.g. "energy_level", "task_ids[3]", "symptoms.headache").'),
  message: z.string(),
  code: z.string().describe('What kind of problem: required, too_big, invalid_value, unknown_field, ...'),
  expected: z.string().optional(),
  received: z.string().optional(),
});

const toolErrorSchema = z.object({
  code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
  message: z.string().describe('What was wrong and what to do instead.'),
  hint: z.string().optional().describe('An example of a valid call, or the next step.'),
  retryable: z.boolean().describe('May the same call succeed later?'),
  details: z
    .looseObject({
      fields: z.array(fieldErrorSchema).optional().describe('VALIDATION_ERROR: one entry per problem.'),
      entity_type: z.string().optional().describe('NOT_FOUND: what was looked for.'),
      query: z.record(z.string(), z.unknown()).optional().describe('NOT_FOUND: how it was looked for.'),
      constraint: z.string().optional().describe('CONFLICT / DATABASE_ERROR: the constraint involved.'),
      sqlstate: z.string().optional().describe('DATABASE_ERROR: the Postgres SQLSTATE.'),
      retry_after_ms: z
        .number()
        .optional()
        .describe('Every 429 and 503: how long to wait before retrying (the Retry-After header, in seconds rounded up).'),
    })
    .optional(),
});

const metaSchema = z.object({
  tool: z.string(),
  trace_id: z.string().describe('The id of this execution in the trace (tool_executions).'),
  duration_ms: z.number(),
  attempts: z.int().describe('Executions attempted; 0 when the call was refused before executing.'),
  queued_ms: z.number().describe('Time spent waiting for an execution slot.'),
  performance_warning: z.boolean().describe('True when the execution took over 5 s.'),
  truncated: z.boolean().optional(),
  replayed: z
    .boolean()
    .optional()
    .describe('True when this is the stored answer of an earlier call with the same idempotency key: nothing ran again.'),
  warnings: z
    .array(warningSchema)
    .optional()
    .describe(
      'Facts about a call that did its work, not failures: lease_lost (the execution slot could not be vouched for while the tool ran; its answer stands); rounded (field was received with more decimals than its column keeps, and stored rounded).',
    ),
});

const linkSchema = z.object({ label: z.string(), url: z.string() });

// The schemas describe exactly the contract's types: a change to one without the other fails to compile.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
true satisfies Same<z.output<typeof metaSchema>, Meta>;
true satisfies Same<z.output<typeof toolErrorSchema>, ToolError>;
true satisfies Same<z.output<typeof linkSchema>, Link>;

/** The envelope's shared parts, as JSON Schemas or as references to them. */
export interface EnvelopeParts {
  meta: JsonSchema;
  error: JsonSchema;
  link: JsonSchema;
}

let inlineParts: EnvelopeParts | undefined;

/** The envelope's parts as inline JSON Schemas, generated once. */
export function envelopeParts(): EnvelopeParts {
  inlineParts ??= { meta: generate(metaSchema), error: generate(toolErrorSchema), link: generate(linkSchema) };
  return inlineParts;
}

function generate(schema: z.ZodType): JsonSchema {
  return embed(z.toJSONSchema(schema, { io: 'output' }), '#');
}

/** The success envelope `{ success: true, message, data, links?, meta }` whose `data` is `data`. */
export function successEnvelopeSchema(data: JsonSchema, parts: EnvelopeParts = envelopeParts()): JsonSchema {
  return {
    type: 'object',
    properties: {
      success: { type: 'boolean', const: true },
      message: { type: 'string', description: 'One line for the agent: what happened.' },
      data,
      links: { type: 'array', items: parts.link },
      meta: parts.meta,
    },
    required: ['success', 'message', 'data', 'meta'],
    additionalProperties: false,
  };
}

/** The failure envelope `{ success: false, message, error, meta }`. */
export function failureEnvelopeSchema(parts: EnvelopeParts = envelopeParts()): JsonSchema {
  return {
    type: 'object',
    properties: {
      success: { type: 'boolean', const: false },
      message: { type: 'string', description: 'The same as error.message.' },
      error: parts.error,
      meta: parts.meta,
    },
    required: ['success', 'message', 'error', 'meta'],
    additionalProperties: false,
  };
}

/**
 * Prepares a standalone JSON Schema for use inside another document at the JSON Pointer `at`
 * (e.g. `#/components/schemas/log-mood.input`): drops `$schema` and rewrites its local references
 * (`#/$defs/...`), which would otherwise resolve against the enclosing document.
 */
export function embed(schema: JsonSchema, at: string): JsonSchema {
  const { $schema: _dialect, ...rest } = schema;
  return at === '#' ? rest : (rebase(rest, at) as JsonSchema);
}

function rebase(node: unknown, at: string): unknown {
  if (Array.isArray(node)) return node.map((item) => rebase(item, at));
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' && value.startsWith('#') ? at + value.slice(1) : rebase(value, at),
    ]),
  );
}
