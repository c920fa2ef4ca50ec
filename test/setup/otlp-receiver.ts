/**
 * A local OTLP/HTTP receiver for tests: records every export it receives, so tests inside
 * workerd can read back the spans a worker sent (names, attributes, parent ids, headers).
 *
 * - `POST /v1/traces`: recorded, answered 200 with an empty `ExportTraceServiceResponse`.
 * - `POST /failing/v1/traces`: recorded, answered 503 (an exporter failure).
 * - `GET /__received`: every recorded export, oldest first: `{ path, headers, body }[]`.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedExport {
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
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
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = { unparsable: Buffer.concat(chunks).toString('utf8').slice(0, 200) };
    }
    received.push({ path, headers: request.headers, body });
    const failing = path.startsWith('/failing/');
    response.writeHead(failing ? 503 : 200, { 'content-type': 'application/json' });
    response.end(failing ? JSON.stringify({ code: 14, message: 'unavailable' }) : '{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
