/**
 * A tool call over HTTP (`POST /tools/:toolId` on the gateway, `POST /` on a tool's own worker):
 * the request is authorised once, the JSON body is the input, the headers carry the idempotency
 * key, the caller's trace and the model's call id; the answer is the envelope.
 */
import { DEFAULT_BODY_LIMIT_BYTES, readJsonObject } from '../core/body.ts';
import { metaWithoutExecution } from '../core/contract.ts';
import type { AnyTool } from '../core/tool.ts';
import { TOOL_CALL_ID_HEADER, toolCallIdOf } from '../observability/trace-context.ts';
import { logUnsuccessful } from '../runtime/call-report.ts';
import type { RequestScope } from '../runtime/env.ts';
import { keyFromHeader } from '../runtime/idempotency.ts';
import type { PipelineOptions } from '../runtime/call.ts';
import { callTool } from '../runtime/pipeline.ts';
import { createAuthorizer, type Authorize, type AuthorizeOptions } from './authorize.ts';
import { respond } from './base.ts';

/**
 * How a worker serves tool calls, over HTTP and MCP alike: the pipeline's options, and how requests
 * are read and authorised (`auth`: how API keys are cached and re-checked; `accessTokens`: which
 * other bearer tokens are taken; `clientAddress`: where a request comes from; see shared/auth/authorize.ts).
 */
export interface ServeOptions extends PipelineOptions, AuthorizeOptions {
  /** Request bodies above this are refused with PAYLOAD_TOO_LARGE (default `DEFAULT_BODY_LIMIT_BYTES`). */
  bodyLimitBytes?: number;
}

/** A worker's options with its one authoriser, built once by {@link served} and handed to every route. */
export interface Served extends ServeOptions {
  authorize: Authorize;
}

/** `options` with the worker's authoriser: call once per worker (createGateway, createToolApp). */
export function served(options: ServeOptions): Served {
  return { ...options, authorize: createAuthorizer(options) };
}

/** Runs one HTTP tool call and answers with the envelope. Never throws. */
export async function serveToolCall(tool: AnyTool, request: Request, scope: RequestScope, options: Served): Promise<Response> {
  const traceId = crypto.randomUUID();
  const gate = await options.authorize(request, scope, { traceId });
  if (!gate.ok) {
    logUnsuccessful('call_refused', gate, { tool: tool.id, trace_id: traceId });
    return respond(gate, metaWithoutExecution(tool.id, traceId));
  }
  const bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const call = {
    readInput: (hint: string) => readJsonObject(request, hint, bodyLimitBytes),
    signal: request.signal,
    idempotencyKey: keyFromHeader(request.headers.get('idempotency-key')),
    traceparent: request.headers.get('traceparent'),
    toolCallId: toolCallIdOf(request.headers.get(TOOL_CALL_ID_HEADER)),
    origin: new URL(request.url).origin,
  };
  const { outcome, meta } = await callTool(tool, call, gate, scope, options);
  return respond(outcome, meta);
}
