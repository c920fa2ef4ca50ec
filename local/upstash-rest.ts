/**
 * A local stand-in for Upstash's Redis REST API over a real redis-server, for development and tests
 * only (never bundled into a Worker). It speaks the protocol as @upstash/redis 1.39 uses it: one
 * command, a pipeline or a transaction per POST, JSON arrays in, `{result}`/`{error}` out, every
 * string reply base64-encoded when the client asks (`Upstash-Encoding: base64`), Redis error text
 * passed through unchanged, and Upstash-only script flags stripped. It talks to redis-server
 * through ioredis, with replies kept as the server sent them. docs/upstash-rest-protocol.md has the
 * facts it follows.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';
import { connectRedis, RedisReplyError } from './redis-server.ts';
import { keepIdleConnections } from './keep-alive.ts';
import { NO_ROUND_TRIP, RoundTripDelay, STATS_PATH, type RoundTrip, type ServedRequest } from './round-trip.ts';

/** Its users start redis-server from here too. */
export { startRedisServer, type RedisServer } from './redis-server.ts';

/** Largest request body the stand-in accepts. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;
/** Idle dedicated connections kept for blocking commands. */
const MAX_IDLE_BLOCKING_CONNECTIONS = 256;

/** Commands that block their connection: each runs on a connection of its own. */
const BLOCKING_COMMANDS = new Set([
  'blpop',
  'brpop',
  'brpoplpush',
  'blmove',
  'blmpop',
  'bzpopmin',
  'bzpopmax',
  'bzmpop',
  'wait',
  'waitaof',
]);
/** Commands that would change the state of the shared connection (Upstash refuses most of them too). */
const REFUSED_COMMANDS = new Set([
  'multi',
  'exec',
  'discard',
  'watch',
  'unwatch',
  'select',
  'subscribe',
  'psubscribe',
  'ssubscribe',
  'unsubscribe',
  'punsubscribe',
  'sunsubscribe',
  'monitor',
  'quit',
  'reset',
  'hello',
  'auth',
  'client',
  'sync',
  'psync',
  'replconf',
  'shutdown',
]);
/** Script shebang flags Redis knows; others (Upstash's `allow-key-locking`) are stripped. */
const REDIS_SCRIPT_FLAGS = new Set(['no-writes', 'allow-oom', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys']);

/** A Redis error reply, carried as a value (inside EXEC and pipeline replies too). */
class ReplyError {
  readonly message: string;
  constructor(message: string) {
    this.message = message;
  }
}

/** Simple and bulk strings are Buffers (binary safe), integers numbers, nil null. */
type Reply = Buffer | number | null | ReplyError | Reply[];

/** ioredis' reply (errors inside arrays are Error objects) as a {@link Reply}. */
function toReply(raw: unknown): Reply {
  if (raw instanceof Error) return new ReplyError(raw.message);
  if (Array.isArray(raw)) return raw.map(toReply);
  if (typeof raw === 'string') return Buffer.from(raw);
  return raw as Buffer | number | null;
}

/** Whether ioredis failed because redis-server answered an error (rather than because it could not be reached). */
function isRedisError(error: unknown): error is Error {
  return error instanceof RedisReplyError;
}

// ---------------------------------------------------------------------------------------------
// The REST endpoint

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

// ---------------------------------------------------------------------------------------------
// Talking to redis-server: one shared connection for ordinary commands, dedicated ones for blocking
// commands, and the script rewriting Upstash's shebang flags need.

class RedisLink {
  /** For ordinary commands, pipelines and transactions. */
  private readonly shared: Redis;
  private readonly idle: Redis[] = [];
  private readonly borrowed = new Set<Redis>();
  /** sha1(script as sent) -> sha1(script as run), for scripts whose shebang flags were stripped. */
  private readonly shas = new Map<string, string>();
  private closed = false;

  private readonly port: number;

  private constructor(port: number) {
    this.port = port;
    this.shared = connectRedis(port);
  }

  /** A link to the redis-server on `port`, its shared connection open. */
  static async open(port: number): Promise<RedisLink> {
    const link = new RedisLink(port);
    await link.shared.connect();
    return link;
  }

  async single(command: string[]): Promise<Reply> {
    const name = command[0]!.toLowerCase();
    if (REFUSED_COMMANDS.has(name)) return new ReplyError(`ERR command '${name}' is not available over REST`);
    const { args, reply } = this.rewrite(command);
    const [raw] = isBlocking(command) ? await this.onOwnConnection([args]) : await this.send(this.shared, [args]);
    return reply(raw!);
  }

  async pipeline(commands: string[][]): Promise<Reply[]> {
    const refused = commands.map((c) => REFUSED_COMMANDS.has(c[0]!.toLowerCase()));
    const rewritten = commands.filter((_, i) => !refused[i]).map((c) => this.rewrite(c));
    const args = rewritten.map((r) => r.args);
    const raw = args.length === 0 ? [] : commands.some(isBlocking) ? await this.onOwnConnection(args) : await this.send(this.shared, args);
    let next = 0;
    return commands.map((c, i) => {
      if (refused[i]) return new ReplyError(`ERR command '${c[0]!.toLowerCase()}' is not available over REST`);
      const { reply } = rewritten[next]!;
      return reply(raw[next++]!);
    });
  }

  /** MULTI ... EXEC written in one go on the shared connection, so nothing interleaves. */
  async multiExec(commands: string[][]): Promise<ReplyError | Reply[]> {
    const refusedName = commands.map((c) => c[0]!.toLowerCase()).find((name) => REFUSED_COMMANDS.has(name));
    if (refusedName) return new ReplyError(`ERR command '${refusedName}' is not available in a transaction`);
    const rewritten = commands.map((c) => this.rewrite(c));
    const transaction = this.shared.multi();
    for (const { args } of rewritten) transaction.callBuffer(...untransformed(args));
    let replies: [Error | null, unknown][] | null;
    try {
      replies = await transaction.exec();
    } catch (error) {
      if (isRedisError(error)) return new ReplyError(error.message); // EXECABORT
      throw error;
    }
    if (!replies) return new ReplyError('ERR transaction aborted');
    return replies.map(([error, value], i) => rewritten[i]!.reply(toReply(error ?? value)));
  }

  close(): void {
    this.closed = true;
    for (const connection of [this.shared, ...this.idle, ...this.borrowed]) connection.disconnect();
    this.idle.length = 0;
    this.borrowed.clear();
  }

  /**
   * Sends the commands on `connection` as one pipeline (written in one go, so nothing interleaves)
   * and returns their replies, errors included.
   */
  private async send(connection: Redis, commands: string[][]): Promise<Reply[]> {
    if (this.closed) throw new Error('stand-in closed');
    const pipeline = connection.pipeline();
    for (const args of commands) pipeline.callBuffer(...untransformed(args));
    const replies = await pipeline.exec();
    if (!replies) throw new Error('the pipeline was not sent');
    return replies.map(([error, value]) => {
      if (error && !isRedisError(error)) throw error; // redis-server unreachable
      return toReply(error ?? value);
    });
  }

  /** Blocking commands each get a connection of their own, kept idle for the next one. */
  private async onOwnConnection(commands: string[][]): Promise<Reply[]> {
    if (this.closed) throw new Error('stand-in closed');
    let connection = this.idle.pop();
    if (!connection) {
      connection = connectRedis(this.port);
      await connection.connect();
    }
    this.borrowed.add(connection);
    try {
      return await this.send(connection, commands);
    } finally {
      this.borrowed.delete(connection);
      if (connection.status === 'ready' && !this.closed && this.idle.length < MAX_IDLE_BLOCKING_CONNECTIONS) this.idle.push(connection);
      else connection.disconnect();
    }
  }

  /**
   * Strips Upstash-only shebang flags from scripts and keeps EVALSHA, SCRIPT LOAD and SCRIPT EXISTS
   * working with the sha1 of the script as the client sent it.
   */
  private rewrite(command: string[]): { args: string[]; reply(raw: Reply): Reply } {
    const asIs = { args: command, reply: (raw: Reply) => raw };
    const name = command[0]!.toLowerCase();
    if ((name === 'eval' || name === 'eval_ro') && command.length > 1) {
      return { args: [command[0]!, this.runnable(command[1]!), ...command.slice(2)], reply: asIs.reply };
    }
    if ((name === 'evalsha' || name === 'evalsha_ro') && command.length > 1) {
      const sha = this.shas.get(command[1]!.toLowerCase());
      return sha ? { args: [command[0]!, sha, ...command.slice(2)], reply: asIs.reply } : asIs;
    }
    if (name === 'script' && command.length > 2) {
      const sub = command[1]!.toLowerCase();
      if (sub === 'load') {
        const original = sha1(command[2]!);
        return {
          args: [command[0]!, command[1]!, this.runnable(command[2]!)],
          reply: (raw) => (raw instanceof ReplyError ? raw : Buffer.from(original)),
        };
      }
      if (sub === 'exists') {
        const shas = command.slice(2).map((sha) => this.shas.get(sha.toLowerCase()) ?? sha);
        return { args: [command[0]!, command[1]!, ...shas], reply: asIs.reply };
      }
    }
    return asIs;
  }

  /** The script Redis can run; remembers the sha1 mapping when it differs from what was sent. */
  private runnable(script: string): string {
    const rewritten = stripUnknownShebangFlags(script);
    if (rewritten !== script) this.shas.set(sha1(script), sha1(rewritten));
    return rewritten;
  }
}

/**
 * Commands whose replies ioredis 6 reshapes (HGETALL into an object; the others into pairs or
 * entries, by protocol), keyed by their lower-case name.
 */
const IOREDIS_REPLY_TRANSFORMS = new Set([
  'hgetall',
  'hrandfield',
  'xread',
  'xreadgroup',
  'vsim',
  'zdiff',
  'zinter',
  'zpopmax',
  'zpopmin',
  'zunion',
  'zrandmember',
  'zrange',
  'zrangebyscore',
  'zrevrange',
  'zrevrangebyscore',
]);

/**
 * The command as ioredis should send it so that its reply comes back as redis-server sent it: the
 * name of a command ioredis reshapes goes upper-case (Redis reads names in any case), any other
 * as the client wrote it (Redis quotes an unknown name back in its error).
 */
function untransformed([name, ...args]: string[]): [string, ...string[]] {
  return [IOREDIS_REPLY_TRANSFORMS.has(name!) ? name!.toUpperCase() : name!, ...args];
}

function isBlocking(command: string[]): boolean {
  const name = command[0]!.toLowerCase();
  if (BLOCKING_COMMANDS.has(name)) return true;
  return (name === 'xread' || name === 'xreadgroup') && command.some((arg) => arg.toLowerCase() === 'block');
}

/**
 * `#!lua flags=allow-key-locking` -> an empty first line (kept so error line numbers still match);
 * flags Redis knows are kept.
 */
function stripUnknownShebangFlags(script: string): string {
  if (!script.startsWith('#!')) return script;
  const lineEnd = script.indexOf('\n');
  const shebang = lineEnd < 0 ? script : script.slice(0, lineEnd);
  const rest = lineEnd < 0 ? '' : script.slice(lineEnd);
  const match = /^#!lua(?:\s+flags=(\S*))?\s*$/.exec(shebang);
  if (!match) return script; // not ours to fix: let Redis report it
  const flags = (match[1] ?? '').split(',').filter(Boolean);
  const known = flags.filter((flag) => REDIS_SCRIPT_FLAGS.has(flag));
  if (known.length === flags.length) return script;
  return (known.length ? `#!lua flags=${known.join(',')}` : '') + rest;
}

function sha1(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('hex');
}
