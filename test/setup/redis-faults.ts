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
import { injectedRoundTrips } from '../../local/round-trip.ts';
import { startRedisServer, startUpstashStandIn, type RedisServer } from '../../local/upstash-rest.ts';
import { startControlServer } from './control-server.ts';

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
  const upstash = await startUpstashStandIn({ redisPort: port, token, roundTrip: injectedRoundTrips().upstash });
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

  const control = await startControlServer({
    freeze: () => act('freeze'),
    thaw: () => act('thaw'),
    kill: () => act('kill'),
    restart: () => act('restart'),
  });

  return {
    url: upstash.url,
    token,
    controlUrl: control.url,
    close: async () => {
      await control.close();
      await act('thaw');
      await upstash.close();
      await server?.stop();
    },
  };
}
