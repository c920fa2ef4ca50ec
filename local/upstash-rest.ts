/**
 * A local stand-in for Upstash's Redis REST API over a real redis-server, for development and tests
 * only (never bundled into a Worker). It speaks the protocol as @upstash/redis 1.39 uses it: one
 * command, a pipeline or a transaction per POST, JSON arrays in, `{result}`/`{error}` out, every
 * string reply base64-encoded when the client asks (`Upstash-Encoding: base64`), Redis error text
 * passed through unchanged, and Upstash-only script flags stripped. It talks to redis-server
 * through ioredis, with replies kept as the server sent them (local/redis-link.ts).
 * docs/upstash-rest-protocol.md has the facts it follows.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { keepIdleConnections } from './keep-alive.ts';
import { RedisLink, ReplyError, type Reply } from './redis-link.ts';
import { NO_ROUND_TRIP, RoundTripDelay, STATS_PATH, type RoundTrip, type ServedRequest } from './round-trip.ts';

/** Its users start redis-server from here too. */
export { startRedisServer, type RedisServer } from './redis-server.ts';

/** Largest request body the stand-in accepts. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

type Encoding = 'base64' | 'utf8';

/** A request the client got wrong: answered 400 with a Redis-style error text. */
class BadRequest extends Error {}

/** Options of {@link startUpstashStandIn}. */
export interface UpstashStandInOptions {
  /** The redis-server it serves. */
  redisPort: number;
  /** The Bearer token it accepts. */
  token: string;
  /** 0 or absent: a random port. */
  port?: number;
  /** The round trip every request costs (local/round-trip.ts); default none. */
  roundTrip?: RoundTrip;
  /** Called with each request once it is answered (when it arrived and was answered, and its commands). */
  onServed?: (request: ServedRequest) => void;
}

/** A running Upstash stand-in. */
export interface UpstashStandIn {
  url: string;
  token: string;
  /** The injected round trip of its requests (changeable while it runs), and what it served. */
  roundTrip: RoundTripDelay;
  close(): Promise<void>;
}

/** A status and its JSON payload. */
type Answer = { status: number; payload: unknown };

/**
 * Starts an HTTP server on 127.0.0.1 (`options.port` or a random port) that serves Upstash's REST
 * protocol over the redis-server on `options.redisPort`: POST `/` (one command), `/pipeline` and
 * `/multi-exec`, Bearer `options.token`. Use it with `new Redis({ url, token })`. `GET /__stats`
 * answers what it served (local/round-trip.ts).
 */
export async function startUpstashStandIn(options: UpstashStandInOptions): Promise<UpstashStandIn> {
  const redis = await RedisLink.open(options.redisPort);
  const expectedAuth = Buffer.from(`Bearer ${options.token}`);
  const roundTrip = new RoundTripDelay(options.roundTrip ?? NO_ROUND_TRIP);
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === STATS_PATH) return respond(res, { status: 200, payload: roundTrip.stats() });
    const arrival = roundTrip.arrive();
    const sent = { path: (req.url ?? '/').split('?')[0]!, body: '' };
    void handle(req, redis, expectedAuth, sent)
      .catch((error: unknown): Answer => ({
        status: 500,
        payload: { error: `ERR stand-in failure: ${(error as Error)?.message ?? String(error)}` },
      }))
      .then(async (answer) => {
        const answeredAt = await roundTrip.release(arrival);
        respond(res, answer);
        options.onServed?.({ arrivedAt: arrival.arrivedAt, answeredAt, ...sent });
      });
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  keepIdleConnections(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    token: options.token,
    roundTrip,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      redis.close();
      await closed;
    },
  };
}

/** Answers one request; `sent.body` gets its body once read. */
async function handle(req: IncomingMessage, redis: RedisLink, expectedAuth: Buffer, sent: { path: string; body: string }): Promise<Answer> {
  const auth = Buffer.from(req.headers.authorization ?? '');
  if (auth.length !== expectedAuth.length || !timingSafeEqual(auth, expectedAuth)) {
    req.resume();
    return { status: 401, payload: { error: 'Unauthorized' } };
  }
  if (req.method !== 'POST') {
    req.resume();
    return { status: 405, payload: { error: 'ERR only POST is supported' } };
  }
  const path = sent.path.replace(/\/+$/, '');
  if (path !== '' && path !== '/pipeline' && path !== '/multi-exec') {
    req.resume();
    return { status: 404, payload: { error: `ERR unknown endpoint ${path}` } };
  }
  const encoding: Encoding = req.headers['upstash-encoding'] === 'base64' ? 'base64' : 'utf8';
  let body: unknown;
  try {
    sent.body = await readBody(req);
    body = JSON.parse(sent.body);
  } catch (error) {
    const tooLarge = error instanceof BadRequest;
    return { status: tooLarge ? 413 : 400, payload: { error: tooLarge ? error.message : 'ERR the body is not valid JSON' } };
  }
  try {
    if (path === '') {
      const reply = await redis.single(toCommand(body));
      return reply instanceof ReplyError
        ? { status: 400, payload: { error: reply.message } }
        : { status: 200, payload: { result: toJson(reply, encoding) } };
    }
    if (!Array.isArray(body) || body.length === 0) {
      throw new BadRequest('ERR the body must be a non-empty array of commands');
    }
    const commands = body.map(toCommand);
    if (path === '/pipeline') {
      const replies = await redis.pipeline(commands);
      return { status: 200, payload: replies.map((reply) => entry(reply, encoding)) };
    }
    const reply = await redis.multiExec(commands);
    return reply instanceof ReplyError
      ? { status: 400, payload: { error: reply.message } }
      : { status: 200, payload: reply.map((item) => entry(item, encoding)) };
  } catch (error) {
    if (error instanceof BadRequest) return { status: 400, payload: { error: error.message } };
    // redis-server unreachable: a server-side failure, not the caller's.
    return { status: 500, payload: { error: `ERR redis-server unavailable: ${(error as Error).message}` } };
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new BadRequest(`ERR the body is larger than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
      } else {
        chunks.push(chunk);
      }
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function respond(res: ServerResponse, { status, payload }: Answer): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(payload));
}

/** Checks one command: a non-empty array of strings, numbers and booleans (sent as their text). */
function toCommand(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new BadRequest('ERR a command must be a non-empty array');
  }
  return value.map((arg) => {
    if (typeof arg === 'string') return arg;
    if ((typeof arg === 'number' && Number.isFinite(arg)) || typeof arg === 'boolean') return String(arg);
    throw new BadRequest('ERR command arguments must be strings or numbers');
  });
}

function entry(reply: Reply, encoding: Encoding): { result: unknown } | { error: string } {
  return reply instanceof ReplyError ? { error: reply.message } : { result: toJson(reply, encoding) };
}

/** Every string is base64-encoded when asked, status replies included; numbers and null pass. */
function toJson(reply: Reply, encoding: Encoding): unknown {
  if (reply instanceof Buffer) return reply.toString(encoding);
  if (reply instanceof ReplyError) return reply.message;
  if (Array.isArray(reply)) return reply.map((item) => toJson(item, encoding));
  return reply;
}
