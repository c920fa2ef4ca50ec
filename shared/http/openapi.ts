/**
 * The OpenAPI 3.1 document of the gateway (`GET /openapi.json`): every tool route with its input
 * schema as the request body and the envelope as the response, for the success and for every
 * error status, plus the catalog, health, code mode and observability routes. Generated from the same zod
 * schemas the validator enforces, through the catalog's JSON Schemas (`tool.jsonSchemas()`).
 */
import * as z from 'zod';
import { ERROR_STATUS } from '../core/contract.ts';
import { CODE_EXAMPLE, codeInput, codeOutput, codeTypesOutput } from '../codemode/schemas.ts';
import { executionDetail, executionsPage, executionsQuery } from '../observability/executions.ts';
import { metricsData, metricsQuery } from '../observability/metrics.ts';
import { refusalsPage, refusalsQuery } from '../observability/refusals.ts';
import { connectedClients, revokedGrant } from './grants.ts';
import { documentQuery, documentRecordData, taskQuery, taskRecordData } from './records.ts';
import { embed, envelopeParts, failureEnvelopeSchema, successEnvelopeSchema, type EnvelopeParts } from './envelope-schema.ts';
import type { JsonSchema } from './compact-schema.ts';
import { SERVER_INFO } from './base.ts';
import { IDEMPOTENCY_HEADER, KEY_TTL_HOURS, MAX_KEY_LENGTH } from '../core/idempotency-key.ts';
import type { AnyTool } from '../core/tool.ts';
import { TOOLSETS } from '../core/toolsets.ts';

const COMPONENTS = '#/components/schemas/';

const toolsetParameter = {
  name: 'toolset',
  in: 'query',
  required: false,
  description: `Only the tools of these toolsets (${TOOLSETS.join(', ')}), comma-separated.`,
  schema: { type: 'string' },
};
const refs: EnvelopeParts = { meta: ref('Meta'), error: ref('ToolError'), link: ref('Link') };

/**
 * Builds the document for `tools` on first use; the returned function adds the server URL the
 * document was requested from.
 */
export function createOpenApiDocument(tools: readonly AnyTool[]): (serverUrl: string) => JsonSchema {
  let document: JsonSchema | undefined;
  return (serverUrl) => {
    document ??= buildDocument(tools);
    return { ...document, servers: [{ url: serverUrl }] };
  };
}

function buildDocument(tools: readonly AnyTool[]): JsonSchema {
  const parts = envelopeParts();
  const schemas: Record<string, JsonSchema> = {
    Meta: parts.meta,
    Link: parts.link,
    ToolError: parts.error,
    Failure: failureEnvelopeSchema(refs),
  };
  const paths: Record<string, JsonSchema> = {
    '/health': { get: operation('health', 'Liveness: answers when the worker is up.', healthData) },
    '/health/ready': {
      get: operation(
        'ready',
        'Readiness: whether the database and Redis answer, each with its latency. No key needed; it tells nothing but up or down. 503 when one is down: DATABASE_ERROR (the database) or BUSY (Redis), with the same checks in error.details.',
        readinessData,
        [503],
      ),
    },
    '/tools': {
      get: {
        ...operation(
          'listTools',
          'The catalog: each tool with its input and output JSON Schemas, or, with format=openai, OpenAI function definitions in strict mode, or, with format=gemini, Gemini function declarations.',
          catalogData,
          [400],
        ),
        parameters: [
          {
            name: 'format',
            in: 'query',
            required: false,
            description:
              'openai: OpenAI function-calling definitions (strict mode) instead of the catalog; gemini: Gemini function declarations.',
            schema: { type: 'string', enum: ['openai', 'gemini'] },
          },
          toolsetParameter,
          {
            name: 'tool',
            in: 'query',
            required: false,
            description: 'Only these tools: ids, repeated or comma-separated.',
            schema: { type: 'string' },
          },
        ],
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'openApi',
        description: 'This document; with toolset=, the tool routes of those toolsets only.',
        parameters: [toolsetParameter],
        responses: { 200: { description: 'The OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } } },
      },
    },
    ...codePaths(),
    ...observabilityPaths(),
  };
  for (const [path, record] of Object.entries(RECORD_ROUTES)) {
    schemas[`${record.name}.data`] = embed(z.toJSONSchema(record.data, { io: 'output' }), ref(`${record.name}.data`).$ref);
    paths[path] = {
      get: {
        ...operation(record.operationId, record.description, ref(`${record.name}.data`), [400, 401, 404, 500, 503]),
        security: [{ apiKey: [] }],
        parameters: [
          {
            name: 'id',
            in: 'path',
            required: true,
            description: `The ${record.name}'s id (a UUID, any letter case).`,
            schema: { type: 'string', format: 'uuid' },
          },
          ...queryParameters(record.query),
        ],
      },
    };
  }
  for (const tool of tools) {
    const { input, output } = tool.jsonSchemas();
    schemas[`${tool.id}.data`] = embed(output, ref(`${tool.id}.data`).$ref);
    paths[`/tools/${tool.id}`] = {
      post: {
        ...operation(tool.id, tool.description, ref(`${tool.id}.data`), errorStatuses()),
        summary: tool.title,
        security: [{ apiKey: [] }],
        ...(tool.acceptsIdempotencyKey && { parameters: [idempotencyKeyParameter] }),
        requestBody: {
          required: true,
          // Inline, not a $ref: hosts that turn each operation into a tool pass this schema on as it is.
          content: { 'application/json': { schema: embed(input, '#'), example: tool.example } },
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: SERVER_INFO.name,
      version: SERVER_INFO.version,
      description:
        'Validated tools for AI agents. Every answer is the envelope: { success: true, message, data, links?, meta } or ' +
        '{ success: false, message, error: { code, message, hint?, retryable, details? }, meta }. ' +
        `The same tools are served over MCP (Streamable HTTP) at POST /mcp, and by toolset at POST /mcp/<toolsets> (${TOOLSETS.join(', ')}; comma-separated for several). ` +
        'Code mode runs code that calls them: POST /code here, or the tools execute and describe at POST /mcp/code.',
    },
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: "Your project's API key: Authorization: Bearer et_..." },
      },
      schemas,
    },
  };
}

/** Code mode: `POST /code` runs an agent's code, `GET /code/types` declares the tools it may call. */
function codePaths(): Record<string, JsonSchema> {
  return {
    '/code': {
      post: {
        ...operation(
          'runCode',
          'Runs one async arrow function (JavaScript) in a sandbox without network and answers with what it returns. Inside it, tools["<tool id>"](input) or tools.<camelCaseId>(input) calls a tool through the full pipeline and resolves to its envelope. data.calls lists every call with its trace id; GET /executions?execution=<meta.trace_id> lists their executions. Needs the gateway\'s Worker Loader binding (CONFIG_ERROR without it).',
          outputSchema(codeOutput),
          errorStatuses(),
        ),
        summary: 'Run code that calls the tools',
        security: [{ apiKey: [] }],
        parameters: [idempotencyKeyParameter],
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: embed(z.toJSONSchema(codeInput, { io: 'input' }), '#'), example: { code: CODE_EXAMPLE } },
          },
        },
      },
    },
    '/code/types': {
      get: {
        ...operation(
          'codeTypes',
          'TypeScript declarations of the tools this credential may call from code: input and output types, generated from the schemas the validator enforces, and the envelope every call returns.',
          outputSchema(codeTypesOutput),
          [401, 403, 500, 503],
        ),
        security: [{ apiKey: [] }],
      },
    },
  };
}

/** The read routes of the trace and the metrics, and the dashboard page. */
function observabilityPaths(): Record<string, JsonSchema> {
  // 403: a credential limited to some toolsets filtering by another toolset's tool.
  const readFailures = [400, 401, 403, 500, 503];
  const read = (operationId: string, description: string, data: z.ZodType, failures: number[], parameters: JsonSchema[]) => ({
    ...(operation(operationId, description, outputSchema(data), failures) as {
      responses: Record<number, { description: string; content: Record<string, unknown> }>;
    }),
    security: [{ apiKey: [] }],
    parameters,
  });
  const metrics = read(
    'getMetrics',
    'Metrics per tool over a window (default the last 24 hours): calls, successes, failures by error code, success rate, duration avg/p50/p95/p99/max, queue wait, retried calls, performance warnings, refused calls, and a time series. format=prometheus answers cumulative counters and histograms (calls by outcome and code, duration, queue wait) in the Prometheus text exposition format, for scraping.',
    metricsData,
    readFailures,
    queryParameters(metricsQuery),
  );
  metrics.responses[200]!.description =
    'The envelope with the metrics; with format=prometheus, the cumulative counters in the Prometheus text exposition format (version 0.0.4).';
  metrics.responses[200]!.content['text/plain'] = { schema: { type: 'string' } };
  return {
    '/executions': {
      get: read(
        'listExecutions',
        "The project's executions (a credential limited to some toolsets: of their tools only), newest first, filtered by tool, status, error code, time range, minimum duration, W3C trace id or code-mode execution (execution=<its trace id>: the tool calls its code made, each with execution_id); paginated with an opaque cursor. Refused calls are not executions (see /metrics).",
        executionsPage,
        readFailures,
        queryParameters(executionsQuery),
      ),
    },
    '/executions/{trace_id}': {
      get: read(
        'getExecution',
        'One execution whole: input, output or error (stack included), duration, queue wait, attempts and each retried error, the API key id as actor, and its W3C trace context.',
        executionDetail,
        [400, 401, 404, 500, 503],
        [
          {
            name: 'trace_id',
            in: 'path',
            required: true,
            description: 'The meta.trace_id of an answer (a UUID), or the same 32 hex digits.',
            schema: { type: 'string' },
          },
        ],
      ),
    },
    '/refusals': {
      get: read(
        'listRefusals',
        "The project's calls refused before executing, newest first: tool, code, the message answered and, for invalid input, each field and its problem.",
        refusalsPage,
        readFailures,
        queryParameters(refusalsQuery),
      ),
    },
    '/metrics': { get: metrics },
    '/grants': {
      get: read(
        'listGrants',
        'The OAuth clients people approved for the project (live grants), newest first. Takes an API key of the project, not an OAuth token.',
        connectedClients,
        [401, 403, 500, 503],
        [],
      ),
    },
    '/grants/{grant_id}': {
      delete: read(
        'revokeGrant',
        "Revokes one of the project's grants: its tokens stop working within about a second, and it can no longer be refreshed. Takes an API key of the project, not an OAuth token.",
        revokedGrant,
        [401, 403, 404, 500, 503],
        [{ name: 'grant_id', in: 'path', required: true, description: 'The grant_id listed by GET /grants.', schema: { type: 'string' } }],
      ),
    },
    '/dashboard': {
      get: {
        operationId: 'dashboard',
        description:
          'A live page of the project whose API key is entered (kept in the tab only): metrics, latency per tool, every call of the window (successes, failures, refusals) with its trace, and the connected clients with a Revoke button.',
        responses: { 200: { description: 'The dashboard page.', content: { 'text/html': { schema: { type: 'string' } } } } },
      },
    },
  };
}

/** Query parameters described by a strict zod object, one per property. */
function queryParameters(schema: z.ZodObject): JsonSchema[] {
  const json = z.toJSONSchema(schema, { io: 'input' }) as { properties: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: 'query', required: json.required?.includes(name) ?? false, description, schema: rest };
  });
}

function outputSchema(schema: z.ZodType): JsonSchema {
  return embed(z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }), '#');
}

/** An operation answering `data` in the success envelope, and the failure envelope on `failures`. */
function operation(operationId: string, description: string, data: JsonSchema, failures: readonly number[] = []): JsonSchema {
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
function errorStatuses(): number[] {
  const statuses = new Set<number>([...Object.values(ERROR_STATUS), 503]);
  statuses.delete(ERROR_STATUS.METHOD_NOT_ALLOWED);
  return [...statuses].sort((a, b) => a - b);
}

function codesOf(status: number): string[] {
  const codes: string[] = Object.entries(ERROR_STATUS)
    .filter(([, s]) => s === status)
    .map(([code]) => code);
  // A transient database failure is answered 503 instead of 500 (shared/core/database.ts), and is retryable.
  if (status === 503) codes.push('DATABASE_ERROR (transient)');
  return codes;
}

const idempotencyKeyParameter: JsonSchema = {
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

/** The read routes for records, documented like the tools: parameters and the envelope of their data. */
const RECORD_ROUTES = {
  '/documents/{id}': {
    name: 'document',
    operationId: 'getDocument',
    description:
      'A document: one chunk of its markdown (chunk, default 1) with a page of the tasks whose line starts in that chunk; next_cursor continues the tasks. Where links to documents point by default.',
    data: documentRecordData,
    query: documentQuery,
  },
  '/tasks/{id}': {
    name: 'task',
    operationId: 'getTask',
    description:
      'A task: its text, its document and the chunk that holds it, whether it is embedded, and how many saved relationships touch it. Where links to tasks point by default.',
    data: taskRecordData,
    query: taskQuery,
  },
} as const;

function ref(name: string): { $ref: string } {
  return { $ref: COMPONENTS + name };
}

const healthData: JsonSchema = {
  type: 'object',
  properties: { status: { type: 'string', const: 'ok' }, tools: { type: 'integer', description: 'How many tools this worker serves.' } },
  required: ['status', 'tools'],
};

const dependencyCheck: JsonSchema = {
  type: 'object',
  properties: {
    status: {
      type: 'string',
      enum: ['up', 'down', 'in_process'],
      description: 'in_process: no Redis, the per-isolate semaphore (local development, or allowed by ALLOW_IN_PROCESS_SEMAPHORE).',
    },
    latency_ms: { type: ['number', 'null'] },
  },
  required: ['status', 'latency_ms'],
};

const readinessData: JsonSchema = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ready', 'not_ready'] },
    checks: { type: 'object', properties: { database: dependencyCheck, redis: dependencyCheck }, required: ['database', 'redis'] },
  },
  required: ['status', 'checks'],
};

const catalogData: JsonSchema = {
  type: 'object',
  properties: {
    tools: {
      type: 'array',
      items: {
        anyOf: [
          {
            type: 'object',
            description: 'A catalog entry (default format).',
            properties: {
              id: { type: 'string' },
              toolset: { type: 'string', enum: [...TOOLSETS], description: 'The toolset it belongs to.' },
              title: { type: 'string', description: 'A short human title.' },
              description: { type: 'string' },
              annotations: {
                type: 'object',
                description: 'What calling the tool does, as MCP tool annotations.',
                properties: Object.fromEntries(
                  ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'].map((hint) => [hint, { type: 'boolean' }]),
                ),
                required: ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'],
              },
              input_schema: { type: 'object', description: 'JSON Schema of the input.' },
              output_schema: { type: 'object', description: 'JSON Schema of data on success.' },
            },
            required: ['id', 'toolset', 'title', 'description', 'annotations', 'input_schema', 'output_schema'],
          },
          {
            type: 'object',
            description: 'An OpenAI function definition (format=openai).',
            properties: {
              type: { type: 'string', const: 'function' },
              function: {
                type: 'object',
                properties: {
                  name: { type: 'string' },
                  description: { type: 'string' },
                  parameters: { type: 'object' },
                  strict: { type: 'boolean' },
                },
                required: ['name', 'description', 'parameters', 'strict'],
              },
            },
            required: ['type', 'function'],
          },
          {
            type: 'object',
            description: 'A Gemini tool of function declarations (format=gemini).',
            properties: {
              functionDeclarations: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: { name: { type: 'string' }, description: { type: 'string' }, parameters: { type: 'object' } },
                  required: ['name', 'description', 'parameters'],
                },
              },
            },
            required: ['functionDeclarations'],
          },
        ],
      },
    },
  },
  required: ['tools'],
};
