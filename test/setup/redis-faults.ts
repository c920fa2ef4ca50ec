/**
 * A redis-server of its own behind its own Upstash stand-in, for the tests that freeze and kill
 * Redis (other suites keep theirs), with an HTTP control endpoint: the workers under test run
 * inside workerd and cannot send signals themselves.
 *
 *   POST {controlUrl} {"action": "freeze"}    SIGSTOP: requests hang, as on a stalled server
 *   POST {controlUrl} {"action": "thaw"}      SIGCONT: it answers everything it was sent meanwhile
 *   POST {controlUrl} {"action": "kill"}      SIGKILL: connections fail at once
 *   POST {controlUrl} {"action": "restart"}   a new, empty redis-server on the same port
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startRedisServer, startUpstashStandIn, type RedisServer } from '../../local/upstash-rest.ts';

export type RedisFaultAction = 'freeze' | 'thaw' | 'kill' | 'restart';

export interface FaultyRedis {
  /** The Upstash stand-in in front of this redis-server. */
  url: string;
  token: string;
  controlUrl: string;
  close(): Promise<void>;
}

/** Starts it all on 127.0.0.1; null when redis-server is not installed. */
export async function startFaultyRedis(token: string): Promise<FaultyRedis | null> {
  let server: RedisServer | null = await startRedisServer();
  if (!server) return null;
  const port = server.port;
  const upstash = await startUpstashStandIn({ redisPort: port, token });
  let frozen = false;

  const act = async (action: RedisFaultAction): Promise<void> => {
    switch (action) {
      case 'freeze':
        if (server && !frozen) process.kill(server.pid, 'SIGSTOP');
        frozen = server !== null;
        return;
      case 'thaw':
        if (server && frozen) process.kill(server.pid, 'SIGCONT');
        frozen = false;
        return;
      case 'kill':
        if (server) process.kill(server.pid, 'SIGKILL');
        await server?.stop();
        server = null;
        frozen = false;
        return;
      case 'restart':
        await act('kill');
        server = await startRedisServer({ port });
        return;
    }
  };

  const control = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let action: unknown;
      try {
        action = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { action?: unknown }).action;
      } catch {
        return reply(response, 400, { error: 'the body must be JSON: {"action": "freeze" | "thaw" | "kill" | "restart"}' });
      }
      if (action !== 'freeze' && action !== 'thaw' && action !== 'kill' && action !== 'restart') {
        return reply(response, 400, { error: `unknown action ${JSON.stringify(action)}; one of freeze, thaw, kill, restart` });
      }
      act(action).then(
        () => reply(response, 200, { ok: true, action }),
        (error: unknown) => reply(response, 500, { error: String(error) }),
      );
    });
  });
  await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
  const { port: controlPort } = control.address() as AddressInfo;

  return {
    url: upstash.url,
    token,
    controlUrl: `http://127.0.0.1:${controlPort}/`,
    close: async () => {
      await new Promise<void>((resolve) => control.close(() => resolve()));
      await act('thaw');
      await upstash.close();
      await server?.stop();
    },
  };
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
