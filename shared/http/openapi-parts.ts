/**
 * The building blocks of the OpenAPI document (shared/http/openapi.ts): an operation answering the
 * envelope, references to the shared components, query parameters from a zod object, the statuses
 * a tool call is answered with, and the parameters several routes take.
 */
import * as z from 'zod';
import { ERROR_STATUS } from '../core/contract.ts';
import { IDEMPOTENCY_HEADER, KEY_TTL_HOURS, MAX_KEY_LENGTH } from '../core/idempotency-key.ts';
import { TOOLSETS } from '../core/toolsets.ts';
import type { JsonSchema } from './compact-schema.ts';
import { embed, successEnvelopeSchema, type EnvelopeParts } from './envelope-schema.ts';

const COMPONENTS = '#/components/schemas/';

/** A reference to the shared component `name` (`#/components/schemas/<name>`). */
export function ref(name: string): { $ref: string } {
  return { $ref: COMPONENTS + name };
}

/** The envelope's parts, as references to the shared components. */
export const refs: EnvelopeParts = { meta: ref('Meta'), error: ref('ToolError'), link: ref('Link') };

/** `?toolset=`, which the catalog and the document take. */
export const toolsetParameter = {
  name: 'toolset',
  in: 'query',
  required: false,
  description: `Only the tools of these toolsets (${TOOLSETS.join(', ')}), comma-separated.`,
  schema: { type: 'string' },
};

/** Query parameters described by a strict zod object, one per property. */
export function queryParameters(schema: z.ZodObject): JsonSchema[] {
  const json = z.toJSONSchema(schema, { io: 'input' }) as { properties: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: 'query', required: json.required?.includes(name) ?? false, description, schema: rest };
  });
}

/** The JSON Schema of what a zod schema outputs, embedded (no references outside it). */
export function outputSchema(schema: z.ZodType): JsonSchema {
  return embed(z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }), '#');
}

/** An operation answering `data` in the success envelope, and the failure envelope on `failures`. */
export function operation(operationId: string, description: string, data: JsonSchema, failures: readonly number[] = []): JsonSchema {
  const responses: Record<string, JsonSchema> = {
    200: {
      description: 'Success: the envelope with the data.',
      content: { 'application/json': { schema: successEnvelopeSchema(data, refs) } },
    },
  };
  for (const status of failures) {
    responses[status] = {
      description: `Failure: ${codesOf(status).join(', ')}.`,
      content: { 'application/json': { schema: ref('Failure') } },
    };
  }
  return { operationId, description, responses };
}

/** Every status a tool call can be answered with, other than 200 (405 concerns other methods than POST). */
export function errorStatuses(): number[] {
  const statuses = new Set<number>([...Object.values(ERROR_STATUS), 503]);
  statuses.delete(ERROR_STATUS.METHOD_NOT_ALLOWED);
  return [...statuses].sort((a, b) => a - b);
}

/** The error codes answered with `status`. */
function codesOf(status: number): string[] {
  const codes: string[] = Object.entries(ERROR_STATUS)
    .filter(([, s]) => s === status)
    .map(([code]) => code);
  // A transient database failure is answered 503 instead of 500 (shared/core/database.ts), and is retryable.
  if (status === 503) codes.push('DATABASE_ERROR (transient)');
  return codes;
}

/** The `Idempotency-Key` header a write route takes. */
export const idempotencyKeyParameter: JsonSchema = {
  name: IDEMPOTENCY_HEADER,
  in: 'header',
  required: false,
  description:
    `A key naming this call (1 to ${MAX_KEY_LENGTH} printable ASCII characters, e.g. a UUID; quoted as an RFC 8941 string or bare). ` +
    `Repeating the call with the same key and input within ${KEY_TTL_HOURS} h returns the stored answer (meta.replayed: true) instead of running again; ` +
    'the same key with another input is refused (422 IDEMPOTENCY_MISMATCH); while the first call runs, 409 CONFLICT (retryable).',
  schema: { type: 'string', minLength: 1, maxLength: MAX_KEY_LENGTH + 2 },
  example: '"8e03978e-40d5-43e8-bc93-6894a57f9324"',
};
