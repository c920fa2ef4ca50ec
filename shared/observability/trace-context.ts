/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): an incoming `traceparent` makes an
 * execution a child of the caller's trace. Without one, the execution starts a trace of its own
 * whose id is its trace UUID written as 32 hex digits, so `meta.trace_id` and the exported span
 * name the same trace.
 */
import { toHex } from '../core/hashing.ts';

/** Where an execution sits in a distributed trace. */
export interface SpanContext {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** This execution's span: 16 lowercase hex digits. */
  spanId: string;
  /** The caller's span, when a `traceparent` arrived. */
  parentSpanId?: string;
  /** Whether the caller records this trace (its `sampled` flag); true for a trace of our own. */
  sampled: boolean;
}

/** The parts of a valid `traceparent` header. */
export interface TraceParent {
  traceId: string;
  parentSpanId: string;
  sampled: boolean;
}

const HEX = /^[0-9a-f]+$/;
const ALL_ZEROS = /^0+$/;

/**
 * Parses a `traceparent` header value. Answers undefined for anything the specification says to
 * ignore: a wrong shape, upper-case hex, an all-zero trace or parent id, version `ff`, or a version
 * 00 header with extra fields. Later versions may append fields after the four known ones.
 *
 * @example
 * parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')
 * // { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', parentSpanId: '00f067aa0ba902b7', sampled: true }
 */
export function parseTraceparent(header: string | null | undefined): TraceParent | undefined {
  if (typeof header !== 'string') return undefined;
  const value = header.trim();
  const [version, traceId, parentSpanId, flags] = value.split('-', 4);
  if (version?.length !== 2 || !HEX.test(version) || version === 'ff') return undefined;
  if (traceId?.length !== 32 || !HEX.test(traceId) || ALL_ZEROS.test(traceId)) return undefined;
  if (parentSpanId?.length !== 16 || !HEX.test(parentSpanId) || ALL_ZEROS.test(parentSpanId)) return undefined;
  if (flags === undefined || !/^[0-9a-f]{2}/.test(flags)) return undefined;
  // Version 00 has exactly four fields; a later version may add fields after a '-'.
  if (version === '00' ? value.length !== 55 : value.length > 55 && value[55] !== '-') return undefined;
  return { traceId, parentSpanId, sampled: (parseInt(flags.slice(0, 2), 16) & 1) === 1 };
}

/**
 * The span context of a new execution: a child of `traceparent` when one is valid, otherwise the
 * root of a trace whose id is `executionId` (a UUID) without its dashes.
 */
export function startSpan(executionId: string, traceparent: string | null | undefined): SpanContext {
  const spanId = randomHex(8);
  const parent = parseTraceparent(traceparent);
  if (parent) return { traceId: parent.traceId, spanId, parentSpanId: parent.parentSpanId, sampled: parent.sampled };
  return { traceId: traceIdOf(executionId), spanId, sampled: true };
}

/** The `traceparent` that makes another execution a child of `span` (code mode's inner calls). */
export function childTraceparent(span: SpanContext): string {
  return `00-${span.traceId}-${span.spanId}-${span.sampled ? '01' : '00'}`;
}

/** The W3C trace id written by an execution that started its own trace: its UUID without dashes. */
export function traceIdOf(executionId: string): string {
  return executionId.replace(/-/g, '').toLowerCase();
}

function randomHex(bytes: number): string {
  const random = crypto.getRandomValues(new Uint8Array(bytes));
  // An all-zero span id is invalid; the chance is 2^-64, but it costs one comparison to exclude.
  if (random.every((byte) => byte === 0)) random[bytes - 1] = 1;
  return toHex(random);
}

/** Where an MCP `tools/call` carries the model's id of the call: `params._meta["edge-tools/tool-call-id"]`. */
export const TOOL_CALL_ID_META_KEY = 'edge-tools/tool-call-id';
/** The HTTP header carrying the model's id of the call. */
export const TOOL_CALL_ID_HEADER = 'tool-call-id';

/**
 * The model's id of a tool call as a client sent it (`call_abc123`, `toolu_01…`): 1 to 256
 * printable ASCII characters, or undefined. It only labels the span, so anything else is ignored
 * rather than refused.
 */
export function toolCallIdOf(value: unknown): string | undefined {
  return typeof value === 'string' && /^[\x21-\x7e]{1,256}$/.test(value) ? value : undefined;
}
