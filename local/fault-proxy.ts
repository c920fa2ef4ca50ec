/**
 * A fault-injecting HTTP proxy for tests: forwards every request to `target`, except the next N,
 * which fail the way a real deployment's infrastructure fails. Tests running inside workerd script
 * it over HTTP: `POST /__faults {"count": 2, "fault": "serialization_failure"}`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How an injected failure looks to the client. */
export const FAULTS = {
  /** Neon's answer to a serialization failure: transient, retried. */
  serialization_failure: { status: 400, body: postgresError('40001', 'could not serialize access due to concurrent update') },
  /** The SQL endpoint itself failing: HTTP 503, transient. */
  unavailable: { status: 503, body: { message: 'service unavailable' } },
  /** A permission error: not transient, attempted once. */
  permission_denied: { status: 400, body: postgresError('42501', 'permission denied for table mood_entries') },
} as const;

export type FaultName = keyof typeof FAULTS;

export interface FaultProxy {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts the proxy on 127.0.0.1 (random port). */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  let pending: { count: number; fault: FaultName } = { count: 0, fault: 'unavailable' };
  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    if (request.url === '/__faults') {
      const wanted = JSON.parse(body) as { count: number; fault: FaultName };
      if (!(wanted.fault in FAULTS)) return send(response, 400, { error: `unknown fault; one of ${Object.keys(FAULTS).join(', ')}` });
      pending = wanted;
      return send(response, 200, { ok: true });
    }
    if (pending.count > 0) {
      pending.count--;
      const fault = FAULTS[pending.fault];
      return send(response, fault.status, fault.body);
    }
    const forwarded = await fetch(new URL(request.url ?? '/', target), {
      method: request.method,
      headers: Object.fromEntries(Object.entries(request.headers).filter(([name]) => name !== 'host' && name !== 'content-length')) as Record<string, string>,
      body: request.method === 'GET' || request.method === 'HEAD' ? undefined : body,
    });
    response.writeHead(forwarded.status, { 'content-type': forwarded.headers.get('content-type') ?? 'application/json' });
    response.end(await forwarded.text());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function postgresError(code: string, message: string) {
  return { message, code, severity: 'ERROR', detail: null, hint: null, constraint: null, table: null, column: null, schema: null };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
