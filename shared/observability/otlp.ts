/**
 * OpenTelemetry export: every call of a known project becomes one span (executions and calls
 * refused before executing alike), sent over OTLP/HTTP after the response (through `waitUntil`),
 * following the GenAI semantic conventions for tool execution (span `execute_tool {tool}`, kind
 * INTERNAL, `gen_ai.operation.name`, `gen_ai.tool.*`, `error.type`). The queue wait and each retried
 * attempt are span events. With `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, the
 * conventions' opt-in `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` carry the call's
 * input and answer, each cut to the largest answer budget, so that an LLM-observability UI shows
 * what the tool did.
 *
 * One span per request needs no tracer: no context propagation inside the worker, no batching
 * processor outliving the request. The span is handed as the SDK's finished span to
 * OpenTelemetry's own serializers (@opentelemetry/otlp-transformer): binary protobuf by default
 * (`http/protobuf`, the protocol every OTLP receiver must accept; some, Arize Phoenix among them,
 * accept nothing else), or the OTLP JSON encoding with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`.
 * An exporter failure is logged and never affects the call.
 */
import { SpanKind, SpanStatusCode, TraceFlags, type Attributes, type HrTime } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { ANSWER_BUDGETS } from '../core/budget.ts';
import { log } from '../core/log.ts';
import type { SpanContext } from './trace-context.ts';

/** The variables of the exporter: the standard OpenTelemetry ones. */
export interface OtlpEnv {
  /** Base URL of an OTLP/HTTP receiver; spans go to `<base>/v1/traces`. Unset: no export. */
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  /** The full URL for spans, used as is (wins over OTEL_EXPORTER_OTLP_ENDPOINT). */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;
  /** Headers sent with every export: `key1=value1,key2=value2`, values URL-encoded. */
  OTEL_EXPORTER_OTLP_HEADERS?: string;
  /** Milliseconds before an export is abandoned (default 10000). */
  OTEL_EXPORTER_OTLP_TIMEOUT?: string;
  /** `http/protobuf` (default) or `http/json`; `grpc` is not available from a worker. */
  OTEL_EXPORTER_OTLP_PROTOCOL?: string;
  /** The protocol for spans (wins over OTEL_EXPORTER_OTLP_PROTOCOL). */
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?: string;
  /** `service.name` of the exported spans (default `edge-tools`). */
  OTEL_SERVICE_NAME?: string;
  /**
   * `true`: spans carry the tool's arguments and result (`gen_ai.tool.call.arguments`,
   * `gen_ai.tool.call.result`), which may hold personal data. Default off; `npm run dev` turns it on.
   */
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?: string;
}

/** The OTLP/HTTP encodings a worker can send. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** Where and how spans are sent. */
export interface OtlpConfig {
  url: string;
  protocol: OtlpProtocol;
  headers: Record<string, string>;
  timeoutMs: number;
  serviceName: string;
  /** Whether spans carry the tool's arguments and result. */
  captureContent: boolean;
}

/**
 * `contentLimit`: characters of JSON kept of arguments or a result: the largest answer budget
 * (shared/core/budget.ts), so a span never carries more than an answer may.
 */
export const OTLP_DEFAULTS = {
  timeoutMs: 10_000,
  serviceName: 'edge-tools',
  protocol: 'http/protobuf' as OtlpProtocol,
  contentLimit: ANSWER_BUDGETS.detailed.content,
} as const;

/** A retried attempt, as the span reports it (one event each). */
export interface SpanRetry {
  /** The attempt that failed. */
  attempt: number;
  code: string;
  /** Unix milliseconds. */
  timeMs: number;
}

/** One call, as exported. */
export interface ExecutionSpan {
  context: SpanContext;
  tool: string;
  toolDescription: string;
  /** The call's trace UUID (`meta.trace_id`): `edge_tools.trace_id`. */
  executionId: string;
  /** The model's own id of this tool call, when the client sent one: `gen_ai.tool.call.id`. */
  toolCallId?: string;
  projectId: string;
  /** Unix milliseconds. */
  startTimeMs: number;
  durationMs: number;
  /** The error code on failure or refusal, absent on success. */
  errorCode?: string;
  errorMessage?: string;
  /** Refused before executing (attempts 0, no queue wait, no retries). */
  refused: boolean;
  attempts: number;
  queuedMs: number;
  /** Unix milliseconds when the call got its execution slot (executions only): the queue wait's event. */
  admittedAtMs?: number;
  performanceWarning: boolean;
  retries: readonly SpanRetry[];
  /** The arguments as received (validated when the call executed) and the data or error answered: exported only when content capture is on. */
  content?: { arguments: unknown; result: unknown };
}

/** The warnings already logged by this isolate: one entry per warning's name, a handful in all. */
const warned = new Set<string>();

/**
 * The exporter's configuration, or undefined when no endpoint is set. A malformed endpoint is
 * logged (once per isolate) and disables the export rather than failing calls.
 */
export function otlpConfigFromEnv(env: OtlpEnv): OtlpConfig | undefined {
  const tracesEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!tracesEndpoint && !base) return undefined;
  const url = tracesEndpoint || `${base!.replace(/\/+$/, '')}/v1/traces`;
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    warnOnce('otlp_invalid_endpoint', {
      message: `The OTLP endpoint '${url.slice(0, 200)}' is not an http(s) URL; spans are not exported.`,
    });
    return undefined;
  }
  const timeout = Number(env.OTEL_EXPORTER_OTLP_TIMEOUT);
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim() || OTLP_DEFAULTS.protocol;
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    warnOnce('otlp_invalid_protocol', {
      message: `The OTLP protocol '${protocol.slice(0, 50)}' cannot be sent from a worker (expected http/protobuf or http/json); spans are sent as http/protobuf.`,
    });
  }
  return {
    url,
    protocol: protocol === 'http/json' ? protocol : OTLP_DEFAULTS.protocol,
    headers: parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS ?? ''),
    timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : OTLP_DEFAULTS.timeoutMs,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || OTLP_DEFAULTS.serviceName,
    captureContent: env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === 'true',
  };
}

/**
 * Parses `OTEL_EXPORTER_OTLP_HEADERS`: comma-separated `key=value` pairs, keys and values
 * trimmed, values URL-decoded. Malformed pairs are skipped.
 *
 * @example
 * parseOtlpHeaders('x-api-key=abc,authorization=Bearer%20t') // { 'x-api-key': 'abc', authorization: 'Bearer t' }
 */
export function parseOtlpHeaders(value: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of value.split(',')) {
    const separator = pair.indexOf('=');
    if (separator <= 0) continue;
    const key = pair.slice(0, separator).trim().toLowerCase();
    let decoded: string;
    try {
      decoded = decodeURIComponent(pair.slice(separator + 1).trim());
    } catch {
      continue;
    }
    if (key) headers[key] = decoded;
  }
  return headers;
}

/** The SDK's finished span, as OpenTelemetry's serializers take it. */
type FinishedSpan = Parameters<typeof ProtobufTraceSerializer.serializeRequest>[0][number];

/**
 * One call's span as the OpenTelemetry SDK would hold it once ended: attributes and events of the
 * GenAI conventions and of this project (`edge_tools.*`), the caller's span as a remote parent.
 */
export function finishedSpan(span: ExecutionSpan, serviceName: string = OTLP_DEFAULTS.serviceName): FinishedSpan {
  const traceFlags = span.context.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE;
  const attributes: Attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': span.tool,
    ...(span.toolCallId !== undefined && { 'gen_ai.tool.call.id': span.toolCallId }),
    'gen_ai.tool.type': 'function',
    'gen_ai.tool.description': span.toolDescription,
    ...(span.content && {
      'gen_ai.tool.call.arguments': jsonWithin(span.content.arguments),
      'gen_ai.tool.call.result': jsonWithin(span.content.result),
    }),
    'edge_tools.trace_id': span.executionId,
    'edge_tools.project.id': span.projectId,
    'edge_tools.refused': span.refused,
    'edge_tools.attempts': Math.trunc(span.attempts),
    'edge_tools.queued_ms': span.queuedMs,
    'edge_tools.performance_warning': span.performanceWarning,
    ...(span.errorCode && { 'error.type': span.errorCode }),
  };
  const events = [
    ...(span.admittedAtMs === undefined
      ? []
      : [{ name: 'edge_tools.queue_wait', time: hrTime(span.admittedAtMs), attributes: { 'edge_tools.queued_ms': span.queuedMs } }]),
    ...span.retries.map((retry) => ({
      name: 'edge_tools.retry',
      time: hrTime(retry.timeMs),
      attributes: { 'edge_tools.attempt': retry.attempt, 'error.type': retry.code },
    })),
  ];
  return {
    name: `execute_tool ${span.tool}`,
    kind: SpanKind.INTERNAL,
    spanContext: () => ({ traceId: span.context.traceId, spanId: span.context.spanId, traceFlags }),
    parentSpanContext: span.context.parentSpanId
      ? { traceId: span.context.traceId, spanId: span.context.parentSpanId, traceFlags, isRemote: true }
      : undefined,
    startTime: hrTime(span.startTimeMs),
    endTime: hrTime(span.startTimeMs + span.durationMs),
    duration: hrTime(span.durationMs),
    status: span.errorCode ? { code: SpanStatusCode.ERROR, message: span.errorMessage ?? span.errorCode } : { code: SpanStatusCode.UNSET },
    attributes,
    events,
    links: [],
    ended: true,
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    instrumentationScope: { name: 'edge-tools' },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** The OTLP/HTTP body (`ExportTraceServiceRequest`) carrying one call's span, in the protocol's encoding. */
export function otlpTraceRequest(
  span: ExecutionSpan,
  options: { protocol?: OtlpProtocol; serviceName?: string } = {},
): { body: Uint8Array; contentType: string } {
  const protocol = options.protocol ?? OTLP_DEFAULTS.protocol;
  const serializer = protocol === 'http/json' ? JsonTraceSerializer : ProtobufTraceSerializer;
  const body = serializer.serializeRequest([finishedSpan(span, options.serviceName)]);
  if (!body) throw new Error('OpenTelemetry could not serialize the span.');
  return { body, contentType: protocol === 'http/json' ? 'application/json' : 'application/x-protobuf' };
}

/**
 * Sends one call's span (its arguments and result only when `captureContent`). Never rejects: a
 * receiver that is down, slow (past the timeout) or answers an error is logged as a warning, and
 * the call it describes is long answered anyway.
 * Spans of traces the caller does not sample (`traceparent` flag 00) are not sent.
 */
export async function exportSpan(config: OtlpConfig, span: ExecutionSpan): Promise<void> {
  if (!span.context.sampled) return;
  try {
    const { body, contentType } = otlpTraceRequest(config.captureContent ? span : { ...span, content: undefined }, config);
    const response = await fetch(config.url, {
      method: 'POST',
      headers: { ...config.headers, 'content-type': contentType },
      // The serializers write into an ArrayBuffer of their own, never a shared one.
      body: body as Uint8Array<ArrayBuffer>,
      signal: AbortSignal.timeout(config.timeoutMs),
    });
    await response.body?.cancel();
    if (!response.ok) log('warn', 'otlp_export_failed', { trace_id: span.executionId, status: response.status });
  } catch (error) {
    log('warn', 'otlp_export_failed', { trace_id: span.executionId, error: error instanceof Error ? error.message : String(error) });
  }
}

/**
 * A value as JSON text of at most {@link OTLP_DEFAULTS}.contentLimit characters; a longer one is cut
 * there and says by how much (`…[cut: N more characters]`), as an answer over its budget would be.
 */
function jsonWithin(value: unknown, limit: number = OTLP_DEFAULTS.contentLimit): string {
  let json: string;
  try {
    json = JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? item.toString() : item)) ?? 'null';
  } catch (error) {
    json = JSON.stringify({ unserializable: String(error) });
  }
  return json.length <= limit ? json : `${json.slice(0, limit)}…[cut: ${json.length - limit} more characters]`;
}

/** Unix milliseconds (possibly fractional) as the SDK's [seconds, nanoseconds]. */
function hrTime(ms: number): HrTime {
  const whole = Math.floor(ms);
  return [Math.floor(whole / 1000), (whole % 1000) * 1_000_000 + Math.min(999_999, Math.round((ms - whole) * 1_000_000))];
}

function warnOnce(event: string, fields: Record<string, unknown>): void {
  if (warned.has(event)) return;
  warned.add(event);
  log('warn', event, fields);
}
