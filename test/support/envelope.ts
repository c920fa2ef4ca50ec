/**
 * The response envelope as the README states it, written out here by hand as JSON Schema 2020-12,
 * and a standard validator (@cfworker/json-schema, which runs in workerd) to judge answers and
 * advertised schemas with: never the schemas the server generates for itself.
 */
import { Validator, type OutputUnit, type Schema } from '@cfworker/json-schema';

const ERROR_CODES = [
  'VALIDATION_ERROR',
  'UNAUTHENTICATED',
  'PERMISSION_DENIED',
  'DOCUMENT_DELETED',
  'UPSTREAM_ERROR',
  'RATE_LIMITED',
  'BUSY',
  'NOT_FOUND',
  'UNKNOWN_TOOL',
  'METHOD_NOT_ALLOWED',
  'CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'IDEMPOTENCY_MISMATCH',
  'DATABASE_ERROR',
  'CONFIG_ERROR',
  'UNKNOWN_ERROR',
];

const meta: Schema = {
  type: 'object',
  required: ['tool', 'trace_id', 'duration_ms', 'attempts', 'queued_ms', 'performance_warning'],
  properties: {
    tool: { type: 'string', minLength: 1 },
    trace_id: { type: 'string', format: 'uuid' },
    duration_ms: { type: 'number', minimum: 0 },
    attempts: { type: 'integer', minimum: 0 },
    queued_ms: { type: 'number', minimum: 0 },
    performance_warning: { type: 'boolean' },
    truncated: { type: 'boolean' },
    replayed: { const: true },
    warnings: {
      type: 'array',
      items: {
        type: 'object',
        required: ['code', 'message'],
        properties: { code: { enum: ['lease_lost', 'rounded'] }, message: { type: 'string' } },
      },
    },
  },
};

/** `{ success: true, message, data, links?, meta }` or `{ success: false, message, error: { code, message, hint?, retryable, details? }, meta }`. */
export const ENVELOPE: Schema = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['success', 'message', 'data', 'meta'],
      properties: {
        success: { const: true },
        message: { type: 'string', minLength: 1 },
        data: {},
        links: {
          type: 'array',
          items: {
            type: 'object',
            required: ['label', 'url'],
            properties: { label: { type: 'string' }, url: { type: 'string', format: 'uri' } },
          },
        },
        meta,
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['success', 'message', 'error', 'meta'],
      properties: {
        success: { const: false },
        message: { type: 'string', minLength: 1 },
        error: {
          type: 'object',
          additionalProperties: false,
          required: ['code', 'message', 'retryable'],
          properties: {
            code: { enum: ERROR_CODES },
            message: { type: 'string', minLength: 1 },
            hint: { type: 'string' },
            retryable: { type: 'boolean' },
            details: { type: 'object' },
          },
        },
        meta,
      },
    },
  ],
};

/** The errors a standard JSON Schema 2020-12 validator finds in `value` against `schema` (none: valid). */
export function schemaErrors(schema: unknown, value: unknown): OutputUnit[] {
  return new Validator(schema as Schema, '2020-12', false).validate(value).errors;
}

/** The fields of `value` that `schema` does not admit at all (its `additionalProperties: false`). */
export function unadmittedFields(schema: unknown, value: Record<string, unknown>): string[] {
  return schemaErrors(schema, value)
    .filter((error) => error.keyword === 'false' && /^#\/[^/]+$/.test(error.instanceLocation))
    .map((error) => decodeURIComponent(error.instanceLocation.slice(2)));
}
