/**
 * A local OTLP/HTTP receiver for tests: records every export it receives, decoded with the official
 * OTLP definitions (../support/otlp-decode.ts), so tests inside workerd can read back the spans a
 * worker sent (names, attributes, parent ids, headers). A body those definitions refuse is recorded
 * with the reason instead, and answered 400 as a collector would.
 *
 * - `POST /v1/traces`: recorded, answered 200 with an empty `ExportTraceServiceResponse`.
 * - `POST /failing/v1/traces`: recorded, answered 503 (an exporter failure).
 * - `GET /__received`: every recorded export, oldest first: `{ path, headers, body | refused }[]`.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeTraceRequest, type TraceRequest } from '../support/otlp-decode.ts';

export interface ReceivedExport {
  path: string;
  headers: IncomingHttpHeaders;
  /** The request in OTLP's JSON shape (ids in hex, 64-bit integers as strings), when it decoded. */
  body?: TraceRequest;
  /** Why the official definitions refused the body. */
  refused?: string;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  received: ReceivedExport[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedExport[] = [];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const path = request.url ?? '/';
    if (request.method === 'GET' && path === '/__received') {
      response.writeHead(200, { 'content-type': 'application/json' });
      return response.end(JSON.stringify(received));
    }
    if (request.method !== 'POST' || !path.endsWith('/v1/traces')) {
      response.writeHead(404);
      return response.end();
    }
    let decoded: Pick<ReceivedExport, 'body' | 'refused'>;
    try {
      decoded = { body: decodeTraceRequest(request.headers['content-type'] ?? '', Buffer.concat(chunks)) };
    } catch (error) {
      decoded = { refused: String(error) };
    }
    received.push({ path, headers: request.headers, ...decoded });
    const status = decoded.refused ? 400 : path.startsWith('/failing/') ? 503 : 200;
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(status === 200 ? '{}' : JSON.stringify({ code: status === 400 ? 3 : 14, message: decoded.refused ?? 'unavailable' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // workerd keeps its connections alive: close() would otherwise wait for them to time out.
        server.closeAllConnections();
      }),
  };
}
