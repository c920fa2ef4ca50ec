/**
 * An HTTP endpoint through which tests running inside workerd ask the Node side to act on the
 * machine (they cannot send signals or spawn processes themselves): `POST {url} {"action": name}`
 * runs that action and answers `{ok: true, action, ...result}`; an unknown action or a body that is
 * not JSON is a 400 that lists the actions.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running control endpoint on 127.0.0.1. */
export interface ControlServer {
  url: string;
  close(): Promise<void>;
}

/** Serves `actions` on an ephemeral port of 127.0.0.1; an action may return fields to add to its answer. */
export async function startControlServer(actions: Record<string, () => unknown>): Promise<ControlServer> {
  const names = Object.keys(actions).join(' | ');
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let action: unknown;
      try {
        action = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { action?: unknown }).action;
      } catch {
        return reply(response, 400, { error: `the body must be JSON: {"action": ${names}}` });
      }
      const run = typeof action === 'string' && Object.hasOwn(actions, action) ? actions[action] : undefined;
      if (!run) return reply(response, 400, { error: `unknown action ${JSON.stringify(action)}; one of ${names}` });
      Promise.resolve()
        .then(run)
        .then(
          (result) => reply(response, 200, { ok: true, action, ...(result as object | undefined) }),
          (error: unknown) => reply(response, 500, { error: String(error) }),
        );
    });
  });
  return serveOnLoopback(server);
}

/** Listens with `server` on an ephemeral port of 127.0.0.1; closing also drops the connections workerd keeps alive. */
export async function serveOnLoopback(server: Server): Promise<ControlServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // workerd keeps its connections alive: close() would otherwise wait for them to time out.
        server.closeAllConnections();
      }),
  };
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
