/**
 * A typed client for TypeScript callers of the gateway, on `hono/client`. Types only come from
 * the registry and the gateway (`import type`): bundling the client pulls in no tool.
 *
 * @example
 * import { createClient } from './functions/client.ts';
 *
 * const client = createClient('http://127.0.0.1:8787', { apiKey: process.env.EDGE_TOOLS_KEY! });
 * const result = await client.callTool('semantic-search', { query: 'hire backend engineers', limit: 5 });
 * if (result.success) for (const hit of result.data.results) console.log(hit.similarity, hit.text);
 * else console.error(result.error.code, result.error.message);
 *
 * const health = await (await client.api.health.$get()).json();
 *
 * const failures = await client.executions({ status: 'failure', limit: 10 });
 * const metrics = await client.metrics({ window: '24h' });
 * const task = await client.getTask(result.data.results[0].task_id);   // where links point
 */
import { hc } from 'hono/client';
import type * as z from 'zod';
import type { ToolResult } from '../shared/core/contract.ts';
import type { Gateway } from '../shared/http/app.ts';
import type { documentRecordData, taskRecordData } from '../shared/http/records.ts';
import type { AnyTool } from '../shared/core/tool.ts';
import type { ExecutionDetail, ExecutionsPage, executionsQuery } from '../shared/observability/executions.ts';
import type { Metrics, metricsQuery } from '../shared/observability/metrics.ts';
import type { tools } from './registry.ts';

/** A registered tool whose id and schemas the type system knows (table tools are built from configurations at run time). */
type Typed<T> = T extends AnyTool ? (string extends T['id'] ? never : T) : never;
type TypedTool = Typed<(typeof tools)[number]>;

/** The ids of the tools the client knows the types of. */
export type ToolId = TypedTool['id'];
/** What `callTool(id, input)` accepts: the tool's input schema, input side (defaults optional). */
export type ToolInput<Id extends string> = Id extends ToolId ? z.input<Extract<TypedTool, { id: Id }>['input']> : Record<string, unknown>;
/** The `data` of a successful call. */
export type ToolOutput<Id extends string> = Id extends ToolId ? z.output<Extract<TypedTool, { id: Id }>['output']> : unknown;

/** The filters of `executions()`: those of `GET /executions`. */
export type ExecutionsQuery = z.input<typeof executionsQuery>;
/** The window of `metrics()`: that of `GET /metrics` (JSON only; Prometheus scrapers call the route). */
export type MetricsQuery = Omit<z.input<typeof metricsQuery>, 'format'>;

export interface ClientOptions {
  /** Your project's API key (`et_...`), sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** Replaces the global fetch (tests, service bindings). Default: `fetch`. */
  fetch?: typeof fetch;
}

export interface CallOptions {
  /**
   * Names this call, so that repeating it (same key, same input, within 24 h) returns its first
   * answer instead of running again: generate one per logical call (e.g. `crypto.randomUUID()`)
   * and reuse it only to repeat that call. Write tools only; read-only tools ignore it.
   */
  idempotencyKey?: string;
}

export interface EdgeToolsClient {
  /** Every route of the gateway, typed by `hc<Gateway>`: `api.health.$get()`, `api.tools.$get({ query })`, ... */
  api: ReturnType<typeof hc<Gateway>>;
  /** Runs a tool and answers its envelope; never throws for a failed call (only when the network fails). */
  callTool<Id extends ToolId | (string & {})>(id: Id, input: ToolInput<Id>, options?: CallOptions): Promise<ToolResult<ToolOutput<Id>>>;
  /** The project's executions, newest first (`GET /executions`); pass `next_cursor` back as `cursor` for more. */
  executions(query?: ExecutionsQuery): Promise<ToolResult<ExecutionsPage>>;
  /** One execution whole, by the `meta.trace_id` of its answer (`GET /executions/:trace_id`). */
  execution(traceId: string): Promise<ToolResult<ExecutionDetail>>;
  /** Metrics per tool over a window (`GET /metrics`), default the last 24 hours. */
  metrics(query?: MetricsQuery): Promise<ToolResult<Metrics>>;
  /** `GET /documents/:id`: a chunk of a document with a page of its tasks (pass `cursor` for the next page). */
  getDocument(id: string, query?: DocumentQuery): Promise<ToolResult<DocumentRecord>>;
  /** `GET /tasks/:id`: a task, its document and its relationship counts. */
  getTask(id: string, query?: { response_format?: 'concise' | 'detailed' }): Promise<ToolResult<TaskRecord>>;
}

/** The query of `GET /documents/:id`. */
export type DocumentQuery = { chunk?: number; cursor?: string; response_format?: 'concise' | 'detailed' };
/** The `data` of `GET /documents/:id`. */
export type DocumentRecord = z.output<typeof documentRecordData>;
/** The `data` of `GET /tasks/:id`. */
export type TaskRecord = z.output<typeof taskRecordData>;

/** A client of the gateway at `baseUrl` (e.g. `http://127.0.0.1:8787`). */
export function createClient(baseUrl: string, { apiKey, fetch = globalThis.fetch }: ClientOptions): EdgeToolsClient {
  const api = hc<Gateway>(baseUrl, { headers: { authorization: `Bearer ${apiKey}` }, fetch });
  const read = async (path: string, query: Record<string, string | number | undefined> = {}) => {
    const url = new URL(baseUrl.replace(/\/+$/, '') + path);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
    const response = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } });
    return (await response.json()) as ToolResult<never>;
  };
  return {
    api,
    async callTool(id: string, input: unknown, { idempotencyKey }: CallOptions = {}) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      // As an RFC 8941 string, the form the Idempotency-Key draft specifies.
      if (idempotencyKey !== undefined) headers['idempotency-key'] = `"${idempotencyKey.replace(/[\\"]/g, '\\$&')}"`;
      const response = await api.tools[':toolId'].$post({ param: { toolId: id } }, { headers, init: { body: JSON.stringify(input) } });
      // JSON, typed by the signature from the id (never: assignable to every tool's result).
      return (await response.json()) as ToolResult<never>;
    },
    executions: (query) => read('/executions', query),
    execution: (traceId) => read(`/executions/${encodeURIComponent(traceId)}`),
    metrics: (query) => read('/metrics', query),
    getDocument: (id, query = {}) => read(`/documents/${encodeURIComponent(id)}`, query),
    getTask: (id, query = {}) => read(`/tasks/${encodeURIComponent(id)}`, query),
  };
}
