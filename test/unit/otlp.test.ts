/**
 * The OTLP/HTTP JSON encoding of a call's span, judged by OpenTelemetry's own serializer
 * (@opentelemetry/otlp-transformer's JsonTraceSerializer) on an equivalent SDK span, with the
 * GenAI attribute names taken from @opentelemetry/semantic-conventions; and the exporter's reading
 * of the standard OTEL_EXPORTER_OTLP_* variables.
 */
import type { SpanContext as OtelSpanContext } from '@opentelemetry/api';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_DESCRIPTION,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
} from '@opentelemetry/semantic-conventions/incubating';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import { describe, expect, it } from 'vitest';
import { OTLP_DEFAULTS, otlpConfigFromEnv, otlpTraceRequest, parseOtlpHeaders, type ExecutionSpan } from '../../shared/observability/otlp.ts';

const span: ExecutionSpan = {
  context: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '7a2190356c3fc94b', parentSpanId: '00f067aa0ba902b7', sampled: true },
  tool: 'semantic-search',
  toolDescription: 'Find tasks by meaning.',
  executionId: '5f0c2b1e-8d4a-4e7b-9c2f-1a2b3c4d5e6f',
  toolCallId: 'call_Qx7bZ2',
  projectId: '11111111-2222-4333-8444-555555555555',
  startTimeMs: 1_764_000_000_123.25,
  durationMs: 2_048.5,
  errorCode: 'DATABASE_ERROR',
  errorMessage: 'The database is temporarily unavailable.',
  refused: false,
  attempts: 3,
  queuedMs: 12.5,
  admittedAtMs: 1_764_000_000_140,
  performanceWarning: false,
  retries: [
    { attempt: 1, code: 'DATABASE_ERROR', timeMs: 1_764_000_000_200 },
    { attempt: 2, code: 'DATABASE_ERROR', timeMs: 1_764_000_002_200 },
  ],
  content: { arguments: { query: 'héllo "world"', limit: 5 }, result: { code: 'DATABASE_ERROR', message: 'The database is temporarily unavailable.' } },
};

/** Milliseconds as the SDK's [seconds, nanoseconds]. */
const hrTime = (ms: number): [number, number] => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];

/** The same span as the OpenTelemetry SDK would hold it (a ReadableSpan), for its serializer. */
function sdkSpan() {
  const context: OtelSpanContext = { traceId: span.context.traceId, spanId: span.context.spanId, traceFlags: 1 };
  return {
    name: 'execute_tool semantic-search',
    kind: 0, // SpanKind.INTERNAL
    spanContext: () => context,
    parentSpanContext: { traceId: span.context.traceId, spanId: span.context.parentSpanId!, traceFlags: 1, isRemote: true },
    startTime: hrTime(span.startTimeMs),
    endTime: hrTime(span.startTimeMs + span.durationMs),
    status: { code: 2, message: span.errorMessage },
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
      [ATTR_GEN_AI_TOOL_NAME]: span.tool,
      [ATTR_GEN_AI_TOOL_CALL_ID]: span.toolCallId,
      [ATTR_GEN_AI_TOOL_TYPE]: 'function',
      [ATTR_GEN_AI_TOOL_DESCRIPTION]: span.toolDescription,
      [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: JSON.stringify(span.content!.arguments),
      [ATTR_GEN_AI_TOOL_CALL_RESULT]: JSON.stringify(span.content!.result),
      'edge_tools.trace_id': span.executionId,
      'edge_tools.project.id': span.projectId,
      'edge_tools.refused': false,
      'edge_tools.attempts': span.attempts,
      'edge_tools.queued_ms': span.queuedMs,
      'edge_tools.performance_warning': false,
      [ATTR_ERROR_TYPE]: 'DATABASE_ERROR',
    },
    links: [],
    events: [
      { name: 'edge_tools.queue_wait', time: hrTime(span.admittedAtMs!), attributes: { 'edge_tools.queued_ms': span.queuedMs } },
      ...span.retries.map((retry) => ({ name: 'edge_tools.retry', time: hrTime(retry.timeMs), attributes: { 'edge_tools.attempt': retry.attempt, [ATTR_ERROR_TYPE]: retry.code } })),
    ],
    duration: hrTime(span.durationMs),
    ended: true,
    resource: { attributes: { 'service.name': 'edge-tools' } },
    instrumentationScope: { name: 'edge-tools' },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** Drops what only says "nothing" (empty lists, zero counts, undefined) and writes 64-bit integers as strings, as OTLP/JSON allows both. */
function normalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalize);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value)
    .filter(([key, item]) => item !== undefined && !(Array.isArray(item) && item.length === 0) && !(/^dropped/.test(key) && item === 0))
    .map(([key, item]) => [key, key === 'intValue' ? String(item) : normalize(item)]);
  return Object.fromEntries(entries);
}

describe('OTLP/HTTP JSON span', () => {
  it('encodes an execution exactly as OpenTelemetry serializes the same span', () => {
    const reference = JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest([sdkSpan() as never])!));
    expect(normalize(otlpTraceRequest(span))).toEqual(normalize(reference));
  });

  it('cuts arguments and results longer than the largest answer budget, and says so', () => {
    const long = 'x'.repeat(OTLP_DEFAULTS.contentLimit);
    const request = otlpTraceRequest({ ...span, content: { arguments: { text: long }, result: null } }) as any;
    const attributes = Object.fromEntries(request.resourceSpans[0].scopeSpans[0].spans[0].attributes.map((a: any) => [a.key, a.value.stringValue]));
    const cut = attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS] as string;
    expect(cut.startsWith(JSON.stringify({ text: long }).slice(0, OTLP_DEFAULTS.contentLimit))).toBe(true);
    expect(cut.endsWith(`…[cut: ${JSON.stringify({ text: long }).length - OTLP_DEFAULTS.contentLimit} more characters]`)).toBe(true);
    expect(attributes[ATTR_GEN_AI_TOOL_CALL_RESULT]).toBe('null');
  });

  it('leaves the arguments, the result and the call id out when there are none', () => {
    const { content: _content, toolCallId: _id, ...bare } = span;
    const keys = (otlpTraceRequest(bare) as any).resourceSpans[0].scopeSpans[0].spans[0].attributes.map((a: { key: string }) => a.key);
    expect(keys).not.toContain(ATTR_GEN_AI_TOOL_CALL_ARGUMENTS);
    expect(keys).not.toContain(ATTR_GEN_AI_TOOL_CALL_RESULT);
    expect(keys).not.toContain(ATTR_GEN_AI_TOOL_CALL_ID);
  });

  it('leaves error.type and the status out on success, and the parent out for a trace of its own', () => {
    const { errorCode: _code, errorMessage: _message, ...succeeded } = span;
    const request = otlpTraceRequest({ ...succeeded, context: { traceId: span.context.traceId, spanId: span.context.spanId, sampled: true } }) as any;
    const encoded = request.resourceSpans[0].scopeSpans[0].spans[0];
    expect(encoded.attributes.map((a: { key: string }) => a.key)).not.toContain('error.type');
    expect(encoded.status).toEqual({});
    expect(encoded).not.toHaveProperty('parentSpanId');
  });
});

describe('exporter configuration', () => {
  it('appends /v1/traces to OTEL_EXPORTER_OTLP_ENDPOINT, and uses OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is', () => {
    expect(otlpConfigFromEnv({})).toBeUndefined();
    expect(otlpConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example.com:4318/' })?.url).toBe('https://collector.example.com:4318/v1/traces');
    expect(otlpConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com/otlp' })?.url).toBe('https://otlp.example.com/otlp/v1/traces');
    expect(otlpConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://a.example.com', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b.example.com/traces' })?.url).toBe('https://b.example.com/traces');
    expect(otlpConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' })).toBeUndefined();
    expect(otlpConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c.example.com' })).toMatchObject({ headers: {}, timeoutMs: 10_000, serviceName: 'edge-tools', captureContent: false });
    expect(otlpConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c.example.com', OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' })?.captureContent).toBe(true);
    expect(otlpConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c.example.com', OTEL_EXPORTER_OTLP_TIMEOUT: '2500', OTEL_SERVICE_NAME: 'tools-eu' })).toMatchObject({ timeoutMs: 2_500, serviceName: 'tools-eu' });
  });

  it('reads OTEL_EXPORTER_OTLP_HEADERS as comma-separated, URL-encoded key=value pairs', () => {
    expect(parseOtlpHeaders('api-key=abc123, Authorization=Basic%20dXNlcjpwYXNz ,x-scope=a=b')).toEqual({
      'api-key': 'abc123',
      authorization: 'Basic dXNlcjpwYXNz',
      'x-scope': 'a=b',
    });
    expect(parseOtlpHeaders('')).toEqual({});
    expect(parseOtlpHeaders('novalue,=nokey,bad=%E0%A4%A,good=1')).toEqual({ good: '1' });
  });
});
