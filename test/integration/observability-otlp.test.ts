/**
 * The OpenTelemetry export through the real worker in workerd, against the OTLP receiver of the test
 * setup: spans decoded with the official definitions carry the GenAI conventions and the caller's
 * parent span, in either encoding, and an exporter's failure never touches the call.
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
import { env } from 'cloudflare:workers';
import { eq, inArray } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { toolExecutions } from '../../drizzle/schema.ts';
import type { Env } from '../../shared/runtime/env.ts';
import { createTenant, db } from './helpers.ts';
import { call, CALLER_SPAN, CALLER_TRACE, flaky, send, services, type Tenant } from './observability-fixture.ts';

/** The project's own span attribute naming the call's trace UUID (meta.trace_id). */
const ATTR_EDGE_TOOLS_TRACE_ID = 'edge_tools.trace_id';
/** OTLP's enum values and span flags (opentelemetry/proto/trace/v1/trace.proto). */
const SPAN_KIND_INTERNAL = 1;
const STATUS_CODE_UNSET = 0;
const STATUS_CODE_ERROR = 2;
const TRACE_FLAG_SAMPLED = 0x1;
const SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE = 0x100;
const SPAN_FLAGS_CONTEXT_IS_REMOTE = 0x200;

describe('OpenTelemetry export', () => {
  type Received = { path: string; headers: Record<string, string>; body?: any; refused?: string };
  const received = async () => (await (await fetch(`${services.otlpUrl}/__received`)).json()) as Received[];
  /**
   * The spans the receiver got for one call (by edge_tools.trace_id, its meta.trace_id), with the
   * export they came in, as decoded with the official OTLP definitions.
   */
  async function spansOf(traceId: string) {
    const found: { span: any; resource: any; exported: Received }[] = [];
    const exports = await received();
    // Every export the worker ever sent decoded: none was refused by the official definitions.
    expect(exports.filter((exported) => exported.refused)).toEqual([]);
    for (const exported of exports) {
      for (const resourceSpans of exported.body!.resourceSpans) {
        for (const scopeSpans of resourceSpans.scopeSpans) {
          for (const span of scopeSpans.spans) {
            const attributes = attributesOf(span);
            if (attributes[ATTR_EDGE_TOOLS_TRACE_ID] === traceId)
              found.push({ span: { ...span, attributes }, resource: resourceSpans.resource, exported });
          }
        }
      }
    }
    return found;
  }
  async function onlySpanOf(traceId: string) {
    const found = await spansOf(traceId);
    expect(found).toHaveLength(1);
    return found[0]!;
  }
  const attributesOf = (node: { attributes: { key: string; value: Record<string, unknown> }[] }) =>
    Object.fromEntries(node.attributes.map(({ key, value }) => [key, Object.values(value)[0]]));
  /** A numeric attribute's value, whichever of OTLP's integer or double it was sent as. */
  const numeric = (value: Record<string, unknown>) => Number(value.intValue ?? value.doubleValue);

  let tenant: Tenant;
  const exportingEnv = (overrides: Partial<Env> = {}): Env => ({
    ...env,
    OTEL_EXPORTER_OTLP_ENDPOINT: services.otlpUrl,
    OTEL_EXPORTER_OTLP_HEADERS: 'x-receiver-token=s3cret%20value, x-team = tools',
    OTEL_SERVICE_NAME: 'edge-tools-test',
    ...overrides,
  });
  beforeAll(async () => {
    tenant = await createTenant('Exported');
  });
  afterEach(() => vi.restoreAllMocks());

  it("exports a successful execution as execute_tool {tool}, a child of the caller's traceparent", async () => {
    const { body } = await call(
      tenant,
      'flaky',
      { text: 'x' },
      { callEnv: exportingEnv(), headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, 'tool-call-id': 'call_flaky_1' } },
    );
    const [found, ...more] = await spansOf(body.meta.trace_id);
    expect(more).toEqual([]);
    expect(found!.exported.path).toBe('/v1/traces');
    // Binary protobuf unless told otherwise: what every OTLP/HTTP receiver accepts.
    expect(found!.exported.headers).toMatchObject({
      'x-receiver-token': 's3cret value',
      'x-team': 'tools',
      'content-type': 'application/x-protobuf',
    });
    expect(attributesOf(found!.resource)).toMatchObject({ [ATTR_SERVICE_NAME]: 'edge-tools-test' });
    const { span } = found!;
    expect(span).toMatchObject({
      name: 'execute_tool flaky',
      kind: SPAN_KIND_INTERNAL,
      traceId: CALLER_TRACE,
      parentSpanId: CALLER_SPAN,
      spanId: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    // Sampled, and its parent is the caller's, across the network.
    expect(span.flags).toBe(TRACE_FLAG_SAMPLED | SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE | SPAN_FLAGS_CONTEXT_IS_REMOTE);
    expect(span.attributes).toMatchObject({
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
      [ATTR_GEN_AI_TOOL_NAME]: 'flaky',
      [ATTR_GEN_AI_TOOL_CALL_ID]: 'call_flaky_1',
      [ATTR_GEN_AI_TOOL_TYPE]: 'function',
      [ATTR_GEN_AI_TOOL_DESCRIPTION]: flaky.description,
      [ATTR_EDGE_TOOLS_TRACE_ID]: body.meta.trace_id,
      'edge_tools.project.id': tenant.projectId,
      'edge_tools.attempts': '2',
      'edge_tools.performance_warning': false,
    });
    expect(span.attributes).not.toHaveProperty(ATTR_ERROR_TYPE);
    expect(span.status).toEqual({ code: STATUS_CODE_UNSET });
    // The queue wait, then the retried attempt, as events inside the span.
    expect(span.events.map((event: { name: string }) => event.name)).toEqual(['edge_tools.queue_wait', 'edge_tools.retry']);
    const [queueWait, retry] = span.events;
    expect(numeric(queueWait.attributes[0].value)).toBe(body.meta.queued_ms);
    expect(retry.attributes).toEqual([
      { key: 'edge_tools.attempt', value: { intValue: '1' } },
      { key: ATTR_ERROR_TYPE, value: { stringValue: 'DATABASE_ERROR' } },
    ]);
    for (const event of span.events) {
      expect(BigInt(event.timeUnixNano)).toBeGreaterThanOrEqual(BigInt(span.startTimeUnixNano));
      expect(BigInt(event.timeUnixNano)).toBeLessThanOrEqual(BigInt(span.endTimeUnixNano));
    }
    // Content capture is off unless configured: no arguments, no result.
    expect(span.attributes).not.toHaveProperty(ATTR_GEN_AI_TOOL_CALL_ARGUMENTS);
    expect(span.attributes).not.toHaveProperty(ATTR_GEN_AI_TOOL_CALL_RESULT);
    expect(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)).toBeGreaterThanOrEqual(0n);
    // The span id is the one stored with the execution.
    const [row] = await db
      .select({ spanId: toolExecutions.otelSpanId })
      .from(toolExecutions)
      .where(eq(toolExecutions.id, body.meta.trace_id));
    expect(row!.spanId).toBe(span.spanId);
  });

  it("exports a failure with error.type and an error status; without traceparent the trace is the execution's own", async () => {
    const { body } = await call(tenant, 'find-nothing', { text: 'gone' }, { callEnv: exportingEnv() });
    const { span } = await onlySpanOf(body.meta.trace_id);
    expect(span.traceId).toBe(body.meta.trace_id.replace(/-/g, ''));
    expect(span).not.toHaveProperty('parentSpanId');
    expect(span.flags).toBe(TRACE_FLAG_SAMPLED | SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE);
    expect(span.attributes[ATTR_ERROR_TYPE]).toBe('NOT_FOUND');
    expect(span.status).toEqual({ code: STATUS_CODE_ERROR, message: body.error.message });
  });

  it('exports a refused call too, with error.type and the arguments it was refused for, when content capture is on', async () => {
    const capturing = exportingEnv({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' });
    const refused = await call(
      tenant,
      'echo',
      { text: 42 },
      { callEnv: capturing, headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` } },
    );
    expect(refused.status).toBe(400);
    const { span } = await onlySpanOf(refused.body.meta.trace_id);
    expect(span).toMatchObject({
      name: 'execute_tool echo',
      traceId: CALLER_TRACE,
      parentSpanId: CALLER_SPAN,
      status: { code: STATUS_CODE_ERROR },
    });
    expect(span.attributes).toMatchObject({
      [ATTR_ERROR_TYPE]: 'VALIDATION_ERROR',
      'edge_tools.refused': true,
      'edge_tools.attempts': '0',
    });
    expect(span.events ?? []).toEqual([]);
    expect(JSON.parse(span.attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS])).toEqual({ text: 42 });
    expect(JSON.parse(span.attributes[ATTR_GEN_AI_TOOL_CALL_RESULT])).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [expect.objectContaining({ field: 'text' })] },
    });

    const succeeded = await call(tenant, 'echo', { text: 'shown' }, { callEnv: capturing });
    const { span: shown } = await onlySpanOf(succeeded.body.meta.trace_id);
    expect(JSON.parse(shown.attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS])).toEqual({ text: 'shown' });
    expect(JSON.parse(shown.attributes[ATTR_GEN_AI_TOOL_CALL_RESULT])).toEqual({ text: 'shown' });
  });

  it("takes the traceparent and the model's call id of an MCP call from params._meta", async () => {
    const parentSpan = 'b7ad6b7169203331';
    const response = await send(
      new Request('http://edge-tools.test/mcp', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tenant.apiKey}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: 'echo',
            arguments: { text: 'over mcp' },
            _meta: { traceparent: `00-${CALLER_TRACE}-${parentSpan}-01`, 'edge-tools/tool-call-id': 'toolu_01Mcp' },
          },
        }),
      }),
      exportingEnv(),
    );
    const message = (await response.json()) as { result: { structuredContent: { meta: { trace_id: string } } } };
    const traceId = message.result.structuredContent.meta.trace_id;
    const { span } = await onlySpanOf(traceId);
    expect(span).toMatchObject({ name: 'execute_tool echo', traceId: CALLER_TRACE, parentSpanId: parentSpan });
    expect(span.attributes[ATTR_GEN_AI_TOOL_CALL_ID]).toBe('toolu_01Mcp');
  });

  it('sends the OTLP JSON encoding instead when OTEL_EXPORTER_OTLP_PROTOCOL is http/json', async () => {
    const { body } = await call(
      tenant,
      'echo',
      { text: 'as json' },
      { callEnv: exportingEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), headers: { 'tool-call-id': 'call_json_1' } },
    );
    const { span, exported } = await onlySpanOf(body.meta.trace_id);
    expect(exported.headers['content-type']).toBe('application/json');
    expect(span).toMatchObject({
      name: 'execute_tool echo',
      kind: SPAN_KIND_INTERNAL,
      traceId: body.meta.trace_id.replace(/-/g, ''),
      status: { code: STATUS_CODE_UNSET },
    });
    expect(span.attributes).toMatchObject({
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
      [ATTR_GEN_AI_TOOL_NAME]: 'echo',
      [ATTR_GEN_AI_TOOL_CALL_ID]: 'call_json_1',
    });
  });

  it('ignores a malformed traceparent and does not export spans the caller does not sample', async () => {
    const malformed = await call(
      tenant,
      'echo',
      { text: 'x' },
      { callEnv: exportingEnv(), headers: { traceparent: `00-${'0'.repeat(32)}-${CALLER_SPAN}-01` } },
    );
    const { span } = await onlySpanOf(malformed.body.meta.trace_id);
    expect(span.traceId).toBe(malformed.body.meta.trace_id.replace(/-/g, ''));

    const unsampled = await call(
      tenant,
      'echo',
      { text: 'x' },
      { callEnv: exportingEnv(), headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-00` } },
    );
    expect(unsampled.status).toBe(200);
    expect(await spansOf(unsampled.body.meta.trace_id)).toEqual([]);
    // Still traced in the database, as a child of the caller.
    const [row] = await db
      .select({ parent: toolExecutions.otelParentSpanId })
      .from(toolExecutions)
      .where(eq(toolExecutions.id, unsampled.body.meta.trace_id));
    expect(row!.parent).toBe(CALLER_SPAN);
  });

  it('never lets an exporter failure touch the call: an error answer or an unreachable receiver', async () => {
    const warnings: string[] = [];
    vi.spyOn(console, 'warn').mockImplementation((line: string) => void warnings.push(line));
    const failing = await call(
      tenant,
      'echo',
      { text: 'x' },
      { callEnv: exportingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: `${services.otlpUrl}/failing` }) },
    );
    expect(failing).toMatchObject({ status: 200, body: { success: true } });
    expect((await spansOf(failing.body.meta.trace_id))[0]!.exported.path).toBe('/failing/v1/traces');

    const unreachable = await call(
      tenant,
      'echo',
      { text: 'y' },
      { callEnv: exportingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }) },
    );
    expect(unreachable).toMatchObject({ status: 200, body: { success: true } });

    const events = warnings.map((line) => JSON.parse(line)).filter((entry) => entry.event === 'otlp_export_failed');
    expect(events.map((entry) => entry.trace_id)).toEqual([failing.body.meta.trace_id, unreachable.body.meta.trace_id]);
    expect(events[0]).toMatchObject({ status: 503 });
    // Both executions are traced all the same.
    const rows = await db
      .select({ id: toolExecutions.id })
      .from(toolExecutions)
      .where(inArray(toolExecutions.id, [failing.body.meta.trace_id, unreachable.body.meta.trace_id]));
    expect(rows).toHaveLength(2);
  });
});
