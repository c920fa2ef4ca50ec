/**
 * The routes of the OpenAPI document other than the tools: health and readiness, the catalog and
 * the document itself, code mode, the records' read routes, the trace and metrics, the grants and
 * the dashboard page. Their data schemas are the zod schemas of the layer that serves each route,
 * but for health, readiness and the catalog, written here.
 */
import * as z from 'zod';
import { CODE_EXAMPLE, codeInput, codeOutput, codeTypesOutput } from '../codemode/schemas.ts';
import { TOOLSETS } from '../core/toolsets.ts';
import { executionDetail, executionsPage, executionsQuery } from '../observability/executions.ts';
import { metricsData, metricsQuery } from '../observability/metrics.ts';
import { refusalsPage, refusalsQuery } from '../observability/refusals.ts';
import type { JsonSchema } from './compact-schema.ts';
import { embed } from './envelope-schema.ts';
import { connectedClients, revokedGrant } from './grants.ts';
import {
  errorStatuses,
  idempotencyKeyParameter,
  operation,
  outputSchema,
  queryParameters,
  ref,
  toolsetParameter,
} from './openapi-parts.ts';
import { documentQuery, documentRecordData, taskQuery, taskRecordData } from './records.ts';

/** Health, readiness, the catalog and this document: the routes that need no key. */
export function servicePaths(): Record<string, JsonSchema> {
  return {
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
  };
}

/** Code mode: `POST /code` runs an agent's code, `GET /code/types` declares the tools it may call. */
export function codePaths(): Record<string, JsonSchema> {
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

// 403: a credential limited to some toolsets filtering by another toolset's tool.
const READ_FAILURES = [400, 401, 403, 500, 503];

/** A route that reads with an API key: the envelope of `data`, the failures, its parameters. */
function readOperation(operationId: string, description: string, data: z.ZodType, failures: number[], parameters: JsonSchema[]) {
  return {
    ...(operation(operationId, description, outputSchema(data), failures) as {
      responses: Record<number, { description: string; content: Record<string, unknown> }>;
    }),
    security: [{ apiKey: [] }],
    parameters,
  };
}

/** The read routes of the trace and the metrics. */
export function tracePaths(): Record<string, JsonSchema> {
  const metrics = readOperation(
    'getMetrics',
    'Metrics per tool over a window (default the last 24 hours): calls, successes, failures by error code, success rate, duration avg/p50/p95/p99/max, queue wait, retried calls, performance warnings, refused calls, and a time series. format=prometheus answers cumulative counters and histograms (calls by outcome and code, duration, queue wait) in the Prometheus text exposition format, for scraping.',
    metricsData,
    READ_FAILURES,
    queryParameters(metricsQuery),
  );
  metrics.responses[200]!.description =
    'The envelope with the metrics; with format=prometheus, the cumulative counters in the Prometheus text exposition format (version 0.0.4).';
  metrics.responses[200]!.content['text/plain'] = { schema: { type: 'string' } };
  return {
    '/executions': {
      get: readOperation(
        'listExecutions',
        "The project's executions (a credential limited to some toolsets: of their tools only), newest first, filtered by tool, status, error code, time range, minimum duration, W3C trace id or code-mode execution (execution=<its trace id>: the tool calls its code made, each with execution_id); paginated with an opaque cursor. Refused calls are not executions (see /metrics).",
        executionsPage,
        READ_FAILURES,
        queryParameters(executionsQuery),
      ),
    },
    '/executions/{trace_id}': {
      get: readOperation(
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
      get: readOperation(
        'listRefusals',
        "The project's calls refused before executing, newest first: tool, code, the message answered and, for invalid input, each field and its problem.",
        refusalsPage,
        READ_FAILURES,
        queryParameters(refusalsQuery),
      ),
    },
    '/metrics': { get: metrics },
  };
}

/** The project's OAuth grants, and the dashboard page. */
export function accountPaths(): Record<string, JsonSchema> {
  return {
    '/grants': {
      get: readOperation(
        'listGrants',
        'The OAuth clients people approved for the project (live grants), newest first. Takes an API key of the project, not an OAuth token.',
        connectedClients,
        [401, 403, 500, 503],
        [],
      ),
    },
    '/grants/{grant_id}': {
      delete: readOperation(
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

/** The records' read routes; their data schemas go into `schemas`, the document's components. */
export function recordPaths(schemas: Record<string, JsonSchema>): Record<string, JsonSchema> {
  const paths: Record<string, JsonSchema> = {};
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
  return paths;
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
