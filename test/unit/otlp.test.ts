/**
 * A call's span as the exporter sends it, in both OTLP/HTTP encodings, decoded by the referee
 * (test/support/otlp-decode.ts: classes generated from the official OTLP protobuf definitions) and
 * checked field by field, with the GenAI attribute names taken from
 * @opentelemetry/semantic-conventions; and the exporter's reading of the standard
 * OTEL_EXPORTER_OTLP_* variables.
 */
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
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
import { describe, expect, it } from 'vitest';
import {
  OTLP_DEFAULTS,
  otlpConfigFromEnv,
  otlpTraceRequest,
  parseOtlpHeaders,
  type ExecutionSpan,
  type OtlpProtocol,
} from '../../shared/observability/otlp.ts';
import { decodeTraceRequest } from '../support/otlp-decode.ts';

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
  content: {
    arguments: { query: 'héllo "world"', limit: 5 },
    result: { code: 'DATABASE_ERROR', message: 'The database is temporarily unavailable.' },
  },
};

const PROTOCOLS: { protocol: OtlpProtocol; contentType: string }[] = [
  { protocol: 'http/protobuf', contentType: 'application/x-protobuf' },
  { protocol: 'http/json', contentType: 'application/json' },
];

/** The one span of an encoded request, as the referee decodes it, its attributes as a record. */
function decoded(sent: ExecutionSpan, protocol: OtlpProtocol = 'http/protobuf') {
  const { body, contentType } = otlpTraceRequest(sent, { protocol, serviceName: 'edge-tools-eu' });
  const request = decodeTraceRequest(contentType, body);
  expect(request.resourceSpans).toHaveLength(1);
  const [resourceSpans] = request.resourceSpans;
  expect(resourceSpans!.scopeSpans).toHaveLength(1);
  const [scopeSpans] = resourceSpans!.scopeSpans;
  expect(scopeSpans.spans).toHaveLength(1);
  const [decodedSpan] = scopeSpans.spans;
  return { resource: resourceSpans!.resource, scope: scopeSpans.scope, span: decodedSpan, attributes: valuesOf(decodedSpan.attributes) };
}

const valuesOf = (attributes: { key: string; value: Record<string, unknown> }[]) =>
  Object.fromEntries(attributes.map(({ key, value }) => [key, value]));

describe.each(PROTOCOLS)('OTLP span as $protocol, decoded with the official definitions', ({ protocol, contentType }) => {
  it(`is sent as ${contentType}`, () => {
    expect(otlpTraceRequest(span, { protocol }).contentType).toBe(contentType);
  });

  it('carries the GenAI tool-execution span: name, kind, ids, times, status, attributes, events', () => {
    const { resource, scope, span: sent, attributes } = decoded(span, protocol);
    expect(valuesOf(resource.attributes)).toEqual({ [ATTR_SERVICE_NAME]: { stringValue: 'edge-tools-eu' } });
    expect(scope).toEqual({ name: 'edge-tools' });
    expect(sent).toMatchObject({
      traceId: span.context.traceId,
      spanId: span.context.spanId,
      parentSpanId: span.context.parentSpanId,
      name: 'execute_tool semantic-search',
      kind: 1, // SPAN_KIND_INTERNAL
      startTimeUnixNano: '1764000000123250000',
      endTimeUnixNano: '1764000002171750000',
      status: { code: 2, message: span.errorMessage }, // STATUS_CODE_ERROR
      flags: 0x301, // sampled, and the parent is known to be remote
    });
    expect(attributes).toEqual({
      [ATTR_GEN_AI_OPERATION_NAME]: { stringValue: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL },
      [ATTR_GEN_AI_TOOL_NAME]: { stringValue: 'semantic-search' },
      [ATTR_GEN_AI_TOOL_CALL_ID]: { stringValue: 'call_Qx7bZ2' },
      [ATTR_GEN_AI_TOOL_TYPE]: { stringValue: 'function' },
      [ATTR_GEN_AI_TOOL_DESCRIPTION]: { stringValue: 'Find tasks by meaning.' },
      [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: { stringValue: JSON.stringify(span.content!.arguments) },
      [ATTR_GEN_AI_TOOL_CALL_RESULT]: { stringValue: JSON.stringify(span.content!.result) },
      [ATTR_ERROR_TYPE]: { stringValue: 'DATABASE_ERROR' },
      'edge_tools.trace_id': { stringValue: span.executionId },
      'edge_tools.project.id': { stringValue: span.projectId },
      'edge_tools.refused': { boolValue: false },
      'edge_tools.attempts': { intValue: '3' },
      'edge_tools.queued_ms': { doubleValue: 12.5 },
      'edge_tools.performance_warning': { boolValue: false },
    });
    expect(sent.events.map((event: any) => ({ ...event, attributes: valuesOf(event.attributes) }))).toMatchObject([
      { name: 'edge_tools.queue_wait', timeUnixNano: '1764000000140000000', attributes: { 'edge_tools.queued_ms': { doubleValue: 12.5 } } },
      {
        name: 'edge_tools.retry',
        timeUnixNano: '1764000000200000000',
        attributes: { 'edge_tools.attempt': { intValue: '1' }, [ATTR_ERROR_TYPE]: { stringValue: 'DATABASE_ERROR' } },
      },
      {
        name: 'edge_tools.retry',
        timeUnixNano: '1764000002200000000',
        attributes: { 'edge_tools.attempt': { intValue: '2' }, [ATTR_ERROR_TYPE]: { stringValue: 'DATABASE_ERROR' } },
      },
    ]);
  });

  it('cuts arguments and results longer than the largest answer budget, and says so', () => {
    const long = 'x'.repeat(OTLP_DEFAULTS.contentLimit);
    const { attributes } = decoded({ ...span, content: { arguments: { text: long }, result: null } }, protocol);
    const cut = attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]!.stringValue as string;
    expect(cut.startsWith(JSON.stringify({ text: long }).slice(0, OTLP_DEFAULTS.contentLimit))).toBe(true);
    expect(cut.endsWith(`…[cut: ${JSON.stringify({ text: long }).length - OTLP_DEFAULTS.contentLimit} more characters]`)).toBe(true);
    expect(attributes[ATTR_GEN_AI_TOOL_CALL_RESULT]).toEqual({ stringValue: 'null' });
  });

  it('leaves the arguments, the result and the call id out when there are none', () => {
    const { content: _content, toolCallId: _id, ...bare } = span;
    const { attributes } = decoded(bare, protocol);
    expect(Object.keys(attributes)).not.toContain(ATTR_GEN_AI_TOOL_CALL_ARGUMENTS);
    expect(Object.keys(attributes)).not.toContain(ATTR_GEN_AI_TOOL_CALL_RESULT);
    expect(Object.keys(attributes)).not.toContain(ATTR_GEN_AI_TOOL_CALL_ID);
    expect(attributes[ATTR_GEN_AI_TOOL_NAME]).toEqual({ stringValue: 'semantic-search' });
  });

  it('leaves error.type and the error status out on success, the parent out for a trace of its own, events out with nothing to tell', () => {
    const { errorCode: _code, errorMessage: _message, admittedAtMs: _admitted, ...succeeded } = span;
    const { span: sent, attributes } = decoded(
      { ...succeeded, retries: [], context: { traceId: span.context.traceId, spanId: span.context.spanId, sampled: true } },
      protocol,
    );
    expect(Object.keys(attributes)).not.toContain(ATTR_ERROR_TYPE);
    expect(sent.status).toEqual({ code: 0 }); // STATUS_CODE_UNSET
    expect(sent).not.toHaveProperty('parentSpanId');
    expect(sent.flags).toBe(0x101); // sampled, no remote parent
    expect(sent.events ?? []).toEqual([]);
  });
});

describe('the referee', () => {
  it('refuses a body the official definitions do not describe', () => {
    const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
    expect(() =>
      decodeTraceRequest('application/json', json({ resourceSpans: [{ scopeSpans: [{ spans: [{ name: 'x', atributes: [] }] }] }] })),
    ).toThrow(/atributes/);
    expect(() =>
      decodeTraceRequest(
        'application/json',
        json({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: 'S/kvNXezTaajzpKdDg5HNg==' }] }] }] }),
      ),
    ).toThrow(/hex/);
    // Field 99 of the request, unknown to the definitions, after a valid span.
    const valid = otlpTraceRequest(span).body;
    expect(() => decodeTraceRequest('application/x-protobuf', new Uint8Array([...valid, 0x98, 0x06, 0x01]))).toThrow(/do not know/);
    expect(() => decodeTraceRequest('text/plain', valid)).toThrow(/application\/x-protobuf/);
  });
});

describe('exporter configuration', () => {
  it('appends /v1/traces to OTEL_EXPORTER_OTLP_ENDPOINT, and uses OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is', () => {
    expect(otlpConfigFromEnv({})).toBeUndefined();
    expect(otlpConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example.com:4318/' })?.url).toBe(
      'https://collector.example.com:4318/v1/traces',
    );
    expect(otlpConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com/otlp' })?.url).toBe(
      'https://otlp.example.com/otlp/v1/traces',
    );
    expect(
      otlpConfigFromEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://a.example.com',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b.example.com/traces',
      })?.url,
    ).toBe('https://b.example.com/traces');
    expect(otlpConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' })).toBeUndefined();
    expect(otlpConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c.example.com' })).toMatchObject({
      headers: {},
      timeoutMs: 10_000,
      serviceName: 'edge-tools',
      protocol: 'http/protobuf',
      captureContent: false,
    });
    expect(
      otlpConfigFromEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c.example.com',
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
      })?.captureContent,
    ).toBe(true);
    expect(
      otlpConfigFromEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c.example.com',
        OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
        OTEL_SERVICE_NAME: 'tools-eu',
      }),
    ).toMatchObject({ timeoutMs: 2_500, serviceName: 'tools-eu' });
  });

  it('sends http/protobuf unless OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL says http/json; grpc falls back to http/protobuf', () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c.example.com' };
    expect(otlpConfigFromEnv({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })?.protocol).toBe('http/json');
    expect(
      otlpConfigFromEnv({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })
        ?.protocol,
    ).toBe('http/protobuf');
    expect(otlpConfigFromEnv({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })?.protocol).toBe('http/protobuf');
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
