/**
 * The referee of what the exporter sends: OTLP trace requests decoded with protobuf.js classes
 * generated from the official opentelemetry-proto definitions (the generated root that
 * @opentelemetry/otlp-transformer 0.210 shipped, installed as `otlp-proto-definitions`), never with
 * the serializer the worker encodes with.
 *
 * Both encodings of OTLP/HTTP are judged strictly: binary protobuf must decode and encode back to
 * the very same bytes (a field the definitions do not know, or of the wrong wire type, would not),
 * and JSON must map onto the definitions (ids as hex, as OTLP's JSON encoding requires) without a
 * single key left over. Either way the answer is the request in OTLP's JSON shape: ids in hex,
 * 64-bit integers as decimal strings, enums as numbers.
 */
import { createRequire } from 'node:module';

interface ProtoType {
  decode(bytes: Uint8Array): object;
  encode(message: object): { finish(): Uint8Array };
  fromObject(object: object): object;
  verify(message: object): string | null;
  toObject(message: object, options: Record<string, unknown>): Record<string, unknown>;
}

const require = createRequire(import.meta.url);
const root = require('otlp-proto-definitions/build/src/generated/root.js') as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: ProtoType } } } } };
};
const ExportTraceServiceRequest = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

/** The byte fields of a trace request: hex in OTLP's JSON, raw bytes on the wire. */
const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);
const TO_OBJECT = { longs: String, enums: Number, bytes: String } as const;

/** An `ExportTraceServiceRequest` in OTLP's JSON shape. */
export type TraceRequest = { resourceSpans: Record<string, any>[] };

/**
 * Decodes the body of a `POST /v1/traces` by its content type (`application/x-protobuf` or
 * `application/json`). Throws, saying what is wrong, when the body does not follow the official
 * definitions.
 */
export function decodeTraceRequest(contentType: string, body: Uint8Array): TraceRequest {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  let message: object;
  if (type === 'application/x-protobuf') {
    message = ExportTraceServiceRequest.decode(body);
    const again = ExportTraceServiceRequest.encode(message).finish();
    if (Buffer.compare(Buffer.from(again), Buffer.from(body)) !== 0) {
      throw new Error(
        `The protobuf body holds fields the OTLP definitions do not know (${body.length} bytes sent, ${again.length} understood).`,
      );
    }
  } else if (type === 'application/json') {
    const json = JSON.parse(new TextDecoder().decode(body)) as unknown;
    message = ExportTraceServiceRequest.fromObject(mapIds(json, hexToBase64) as object);
    const invalid = ExportTraceServiceRequest.verify(message);
    if (invalid) throw new Error(`The JSON body does not follow the OTLP definitions: ${invalid}.`);
    const unknown = leftOver(json, ExportTraceServiceRequest.toObject(message, { ...TO_OBJECT, arrays: true }));
    if (unknown.length) throw new Error(`The JSON body has keys the OTLP definitions do not know: ${unknown.join(', ')}.`);
  } else {
    throw new Error(`OTLP/HTTP sends application/x-protobuf or application/json, not '${contentType}'.`);
  }
  return mapIds(ExportTraceServiceRequest.toObject(message, TO_OBJECT), base64ToHex) as TraceRequest;
}

/** `value` with every id field rewritten by `map`. */
function mapIds(value: unknown, map: (id: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => mapIds(item, map));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, ID_FIELDS.has(key) && typeof item === 'string' ? map(item) : mapIds(item, map)]),
  );
}

function hexToBase64(hex: string): string {
  if (!/^(?:[0-9a-f]{16}|[0-9a-f]{32})$/.test(hex)) throw new Error(`OTLP's JSON ids are 16 or 32 lowercase hex digits, not '${hex}'.`);
  return Buffer.from(hex, 'hex').toString('base64');
}

const base64ToHex = (base64: string): string => Buffer.from(base64, 'base64').toString('hex');

/** The key paths of `sent` that are missing from `understood`, what the definitions dropped. */
function leftOver(sent: unknown, understood: unknown, path = ''): string[] {
  if (typeof sent !== 'object' || sent === null) return [];
  if (typeof understood !== 'object' || understood === null) return [path || '(root)'];
  return Object.entries(sent).flatMap(([key, item]) => {
    const inner = (understood as Record<string, unknown>)[key];
    const here = Array.isArray(sent) ? `${path}[${key}]` : `${path}${path ? '.' : ''}${key}`;
    return key in (understood as object) ? leftOver(item, inner, here) : [here];
  });
}
