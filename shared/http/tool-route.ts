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
import { callTool, type PipelineOptions } from '../runtime/pipeline.ts';
import { authorize, credentialsOf, type AuthorizeOptions } from './authorize.ts';
import { respond } from './base.ts';

/**
 * How a worker serves tool calls, over HTTP and MCP alike: the pipeline's options, and how requests
 * are read and authorised (`auth`: how API keys are cached and re-checked; `accessTokens`: which
 * other bearer tokens are taken, see shared/http/authorize.ts).
 */
export interface ServeOptions extends PipelineOptions, Pick<AuthorizeOptions, 'auth' | 'accessTokens'> {
  /** Request bodies above this are refused with PAYLOAD_TOO_LARGE (default `DEFAULT_BODY_LIMIT_BYTES`). */
  bodyLimitBytes?: number;
}

/** Runs one HTTP tool call and answers with the envelope. Never throws. */
export async function serveToolCall(tool: AnyTool, request: Request, scope: RequestScope, options: ServeOptions = {}): Promise<Response> {
  const traceId = crypto.randomUUID();
  const caller = await authorize(credentialsOf(request), scope, { ...options, traceId });
  if (!caller.ok) {
    logUnsuccessful('call_refused', caller, { tool: tool.id, trace_id: traceId });
    return respond(caller, metaWithoutExecution(tool.id, traceId));
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
  const { outcome, meta } = await callTool(tool, call, caller, scope, options);
  return respond(outcome, meta);
}
