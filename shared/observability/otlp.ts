/**
 * OpenTelemetry export: every call of a known project becomes one span (executions and calls
 * refused before executing alike), sent as OTLP/HTTP JSON after the response (through
 * `waitUntil`), following the GenAI semantic conventions for tool execution (span
 * `execute_tool {tool}`, kind INTERNAL, `gen_ai.operation.name`, `gen_ai.tool.*`, `error.type`).
 * With `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, the conventions' opt-in
 * `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` carry the call's input and answer,
 * each cut to the largest answer budget, so that an LLM-observability UI shows what the tool did.
 *
 * One span per request needs no SDK: no context propagation inside the worker, no batching
 * processor outliving the request. The payload is the OTLP JSON encoding of
 * `ExportTraceServiceRequest` (ids in hex, times in Unix nanoseconds as strings). An exporter
 * failure is logged and never affects the call.
 */
import { ANSWER_BUDGETS } from '../core/budget.ts';
import { log } from './log.ts';
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
  /** `service.name` of the exported spans (default `edge-tools`). */
  OTEL_SERVICE_NAME?: string;
  /**
   * `true`: spans carry the tool's arguments and result (`gen_ai.tool.call.arguments`,
   * `gen_ai.tool.call.result`), which may hold personal data. Default off; `npm run dev` turns it on.
   */
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?: string;
}

/** Where and how spans are sent. */
export interface OtlpConfig {
  url: string;
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
export const OTLP_DEFAULTS = { timeoutMs: 10_000, serviceName: 'edge-tools', contentLimit: ANSWER_BUDGETS.detailed.content } as const;

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

/** OTLP's `SPAN_KIND_INTERNAL` and `STATUS_CODE_ERROR`. */
const SPAN_KIND_INTERNAL = 1;
const STATUS_CODE_ERROR = 2;
/** Span flags: the W3C sampled flag in the low byte; whether the parent is remote is known (and, with a parent, it is: the caller). */
const FLAG_SAMPLED = 0x1;
const FLAG_HAS_IS_REMOTE = 0x100;
const FLAG_IS_REMOTE = 0x200;

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
    warnOnce('otlp_invalid_endpoint', { message: `The OTLP endpoint '${url.slice(0, 200)}' is not an http(s) URL; spans are not exported.` });
    return undefined;
  }
  const timeout = Number(env.OTEL_EXPORTER_OTLP_TIMEOUT);
  return {
    url,
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

/** The OTLP/HTTP JSON body (`ExportTraceServiceRequest`) carrying one call's span. */
export function otlpTraceRequest(span: ExecutionSpan, serviceName: string = OTLP_DEFAULTS.serviceName): Record<string, unknown> {
  const attributes: Record<string, AttributeValue> = {
    'gen_ai.operation.name': text('execute_tool'),
    'gen_ai.tool.name': text(span.tool),
    ...(span.toolCallId !== undefined && { 'gen_ai.tool.call.id': text(span.toolCallId) }),
    'gen_ai.tool.type': text('function'),
    'gen_ai.tool.description': text(span.toolDescription),
    ...(span.content && { 'gen_ai.tool.call.arguments': text(jsonWithin(span.content.arguments)), 'gen_ai.tool.call.result': text(jsonWithin(span.content.result)) }),
    'edge_tools.trace_id': text(span.executionId),
    'edge_tools.project.id': text(span.projectId),
    'edge_tools.refused': { boolValue: span.refused },
    'edge_tools.attempts': integer(span.attempts),
    'edge_tools.queued_ms': { doubleValue: span.queuedMs },
    'edge_tools.performance_warning': { boolValue: span.performanceWarning },
  };
  if (span.errorCode) attributes['error.type'] = text(span.errorCode);
  const events = span.retries.map((retry) => ({
    name: 'edge_tools.retry',
    timeUnixNano: unixNanos(retry.timeMs),
    attributes: keyValues({ 'edge_tools.attempt': integer(retry.attempt), 'error.type': text(retry.code) }),
  }));
  if (span.admittedAtMs !== undefined) {
    events.unshift({ name: 'edge_tools.queue_wait', timeUnixNano: unixNanos(span.admittedAtMs), attributes: keyValues({ 'edge_tools.queued_ms': { doubleValue: span.queuedMs } }) });
  }
  const otlpSpan: Record<string, unknown> = {
    traceId: span.context.traceId,
    spanId: span.context.spanId,
    name: `execute_tool ${span.tool}`,
    kind: SPAN_KIND_INTERNAL,
    startTimeUnixNano: unixNanos(span.startTimeMs),
    endTimeUnixNano: unixNanos(span.startTimeMs + span.durationMs),
    attributes: keyValues(attributes),
    events,
    status: span.errorCode ? { code: STATUS_CODE_ERROR, message: span.errorMessage ?? span.errorCode } : {},
    flags: (span.context.sampled ? FLAG_SAMPLED : 0) | FLAG_HAS_IS_REMOTE | (span.context.parentSpanId ? FLAG_IS_REMOTE : 0),
  };
  if (span.context.parentSpanId) otlpSpan.parentSpanId = span.context.parentSpanId;
  return {
    resourceSpans: [
      {
        resource: { attributes: keyValues({ 'service.name': text(serviceName) }) },
        scopeSpans: [{ scope: { name: 'edge-tools' }, spans: [otlpSpan] }],
      },
    ],
  };
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
    const response = await fetch(config.url, {
      method: 'POST',
      headers: { ...config.headers, 'content-type': 'application/json' },
      body: JSON.stringify(otlpTraceRequest(config.captureContent ? span : { ...span, content: undefined }, config.serviceName)),
      signal: AbortSignal.timeout(config.timeoutMs),
    });
    await response.body?.cancel();
    if (!response.ok) log('warn', 'otlp_export_failed', { trace_id: span.executionId, status: response.status });
  } catch (error) {
    log('warn', 'otlp_export_failed', { trace_id: span.executionId, error: error instanceof Error ? error.message : String(error) });
  }
}

/** An OTLP `AnyValue`, in the JSON encoding (64-bit integers as decimal strings). */
type AttributeValue = { stringValue: string } | { boolValue: boolean } | { intValue: string } | { doubleValue: number };

const text = (value: string): AttributeValue => ({ stringValue: value });
const integer = (value: number): AttributeValue => ({ intValue: String(Math.trunc(value)) });

function keyValues(attributes: Record<string, AttributeValue>): { key: string; value: AttributeValue }[] {
  return Object.entries(attributes).map(([key, value]) => ({ key, value }));
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

/** Unix milliseconds (possibly fractional) as OTLP's nanoseconds, a decimal string. */
function unixNanos(ms: number): string {
  return (BigInt(Math.floor(ms)) * 1_000_000n + BigInt(Math.round((ms % 1) * 1_000_000))).toString();
}

function warnOnce(event: string, fields: Record<string, unknown>): void {
  if (warned.has(event)) return;
  warned.add(event);
  log('warn', event, fields);
}
