/**
 * A local stand-in for Upstash's Redis REST API over a real redis-server, for development and tests
 * only (never bundled into a Worker). It speaks the protocol as @upstash/redis 1.39 uses it; see
 * shared/notes/upstash-rest-protocol.md for the facts it follows.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, timingSafeEqual } from 'node:crypto';
import { access, constants } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort } from './wrangler-dev.ts';

/** Largest request body the stand-in accepts. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;
/** Idle dedicated connections kept for blocking commands. */
const MAX_IDLE_BLOCKING_CONNECTIONS = 256;
/** How long redis-server may take to answer its first PING. */
const REDIS_START_TIMEOUT_MS = 5_000;
/** How long redis-server may take to exit after SIGTERM before it gets SIGKILL. */
const REDIS_STOP_TIMEOUT_MS = 3_000;

/** Commands that block their connection: each runs on a connection of its own. */
const BLOCKING_COMMANDS = new Set([
  'blpop', 'brpop', 'brpoplpush', 'blmove', 'blmpop', 'bzpopmin', 'bzpopmax', 'bzmpop', 'wait',
  'waitaof',
]);
/** Commands that would change the state of the shared connection (Upstash refuses most of them too). */
const REFUSED_COMMANDS = new Set([
  'multi', 'exec', 'discard', 'watch', 'unwatch', 'select', 'subscribe', 'psubscribe', 'ssubscribe',
  'unsubscribe', 'punsubscribe', 'sunsubscribe', 'monitor', 'quit', 'reset', 'hello', 'auth', 'client',
  'sync', 'psync', 'replconf', 'shutdown',
]);
/** Script shebang flags Redis knows; others (Upstash's `allow-key-locking`) are stripped. */
const REDIS_SCRIPT_FLAGS = new Set(['no-writes', 'allow-oom', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys']);

// ---------------------------------------------------------------------------------------------
// redis-server

/** A throwaway redis-server started by {@link startRedisServer}. */
export interface RedisServer {
  port: number;
  url: string;
  /** Its process id, for tests that freeze (SIGSTOP) or kill it. */
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts a throwaway redis-server on 127.0.0.1 with no persistence, on `options.port` or a random
 * free port. Resolves with null (and does not throw) when no `redis-server` binary is on PATH.
 */
export async function startRedisServer(options: { port?: number } = {}): Promise<RedisServer | null> {
  const binary = await findOnPath('redis-server');
  if (!binary) return null;
  // A random port can be taken between probing and binding: try a few.
  for (let attempt = 0; ; attempt++) {
    const port = options.port ?? (await freePort());
    const child = spawn(
      binary,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmpdir(),
        '--daemonize', 'no', '--loglevel', 'warning'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Never leave an orphan redis-server behind when the test process exits without stopping it.
    const killOnExit = () => child.kill('SIGKILL');
    process.once('exit', killOnExit);
    const stop = async () => {
      process.off('exit', killOnExit);
      await stopChild(child);
    };
    if (await waitForPing(port, child)) {
      return { port, url: `redis://127.0.0.1:${port}`, pid: child.pid!, stop };
    }
    await stop();
    if (options.port !== undefined || attempt >= 2) {
      throw new Error(`redis-server did not start on port ${port}: ${stderr.trim() || 'no output'}`);
    }
  }
}

async function findOnPath(name: string): Promise<string | null> {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

async function waitForPing(port: number, child: ChildProcess): Promise<boolean> {
  const deadline = Date.now() + REDIS_START_TIMEOUT_MS;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      const conn = await RespConnection.open(port);
      const [reply] = await conn.send([['ping']]);
      conn.close();
      if (reply instanceof Buffer && reply.toString() === 'PONG') return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), REDIS_STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
    child.kill('SIGCONT'); // a frozen (SIGSTOPped) server handles SIGTERM only once it runs again
  });
}

// ---------------------------------------------------------------------------------------------
// A minimal RESP2 client: replies exactly as the server sent them (no reply transforms, no offline
// queue, no reconnect loop), which is what a protocol stand-in needs.

/** A Redis error reply, carried as a value (inside EXEC and pipeline replies too). */
class ReplyError {
  readonly message: string;
  constructor(message: string) {
    this.message = message;
  }
}

/** Simple and bulk strings are Buffers (binary safe), integers numbers, nil null. */
type Reply = Buffer | number | null | ReplyError | Reply[];

const CRLF = Buffer.from('\r\n');

/** Parses one reply at `at`; undefined when the buffer does not hold all of it yet. */
function parseReply(buf: Buffer, at: number): [Reply, number] | undefined {
  const lineEnd = buf.indexOf(CRLF, at);
  if (lineEnd < 0) return undefined;
  const type = buf[at];
  const line = buf.toString('utf8', at + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case 0x2b: // '+'
      return [buf.subarray(at + 1, lineEnd), next];
    case 0x2d: // '-'
      return [new ReplyError(line), next];
    case 0x3a: // ':'
      return [Number(line), next];
    case 0x24: { // '$'
      const length = Number(line);
      if (length < 0) return [null, next];
      if (buf.length < next + length + 2) return undefined;
      return [buf.subarray(next, next + length), next + length + 2];
    }
    case 0x2a: { // '*'
      const count = Number(line);
      if (count < 0) return [null, next];
      const items: Reply[] = [];
      let offset = next;
      for (let i = 0; i < count; i++) {
        const parsed = parseReply(buf, offset);
        if (!parsed) return undefined;
        items.push(parsed[0]);
        offset = parsed[1];
      }
      return [items, offset];
    }
    default:
      throw new Error(`unexpected RESP type byte ${type}`);
  }
}

function encodeCommand(args: string[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = Buffer.from(arg, 'utf8');
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, CRLF);
  }
  return Buffer.concat(parts);
}

class RespConnection {
  private readonly socket: Socket;
  private readonly waiting: { resolve(reply: Reply): void; reject(error: Error): void }[] = [];
  private buffer: Buffer = Buffer.alloc(0);
  dead = false;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('connection to redis-server closed')));
  }

  static open(port: number): Promise<RespConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host: '127.0.0.1' });
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new RespConnection(socket));
      });
      socket.once('error', reject);
    });
  }

  /** Writes all commands in one go (so nothing interleaves) and resolves with their replies. */
  send(commands: string[][]): Promise<Reply[]> {
    if (this.dead) return Promise.reject(new Error('connection to redis-server closed'));
    const replies = commands.map(
      () => new Promise<Reply>((resolve, reject) => this.waiting.push({ resolve, reject })),
    );
    this.socket.write(Buffer.concat(commands.map(encodeCommand)));
    return Promise.all(replies);
  }

  close(): void {
    this.dead = true;
    this.socket.destroy();
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    let offset = 0;
    try {
      for (let parsed = parseReply(this.buffer, offset); parsed; parsed = parseReply(this.buffer, offset)) {
        offset = parsed[1];
        this.waiting.shift()?.resolve(parsed[0]);
      }
    } catch (error) {
      this.fail(error as Error);
      this.socket.destroy();
      return;
    }
    this.buffer = this.buffer.subarray(offset);
  }

  private fail(error: Error): void {
    this.dead = true;
    for (const waiter of this.waiting.splice(0)) waiter.reject(error);
  }
}

// ---------------------------------------------------------------------------------------------
// The REST endpoint

type Encoding = 'base64' | 'utf8';

/** A request the client got wrong: answered 400 with a Redis-style error text. */
class BadRequest extends Error {}

/**
 * Starts an HTTP server on 127.0.0.1 (`options.port` or a random port) that serves Upstash's REST
 * protocol over the redis-server on `options.redisPort`: POST `/` (one command), `/pipeline` and
 * `/multi-exec`, Bearer `options.token`. Use it with `new Redis({ url, token })`.
 */
export async function startUpstashStandIn(options: {
  redisPort: number;
  token: string;
  port?: number;
}): Promise<{ url: string; token: string; close(): Promise<void> }> {
  const redis = new RedisLink(options.redisPort);
  const expectedAuth = Buffer.from(`Bearer ${options.token}`);
  const server = createServer((req, res) => {
    handle(req, res, redis, expectedAuth).catch((error: unknown) => {
      respond(res, 500, { error: `ERR stand-in failure: ${(error as Error)?.message ?? String(error)}` });
    });
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    token: options.token,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      redis.close();
      await closed;
    },
  };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  redis: RedisLink,
  expectedAuth: Buffer,
): Promise<void> {
  const auth = Buffer.from(req.headers.authorization ?? '');
  if (auth.length !== expectedAuth.length || !timingSafeEqual(auth, expectedAuth)) {
    req.resume();
    return respond(res, 401, { error: 'Unauthorized' });
  }
  if (req.method !== 'POST') {
    req.resume();
    return respond(res, 405, { error: 'ERR only POST is supported' });
  }
  const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
  if (path !== '' && path !== '/pipeline' && path !== '/multi-exec') {
    req.resume();
    return respond(res, 404, { error: `ERR unknown endpoint ${path}` });
  }
  const encoding: Encoding = req.headers['upstash-encoding'] === 'base64' ? 'base64' : 'utf8';
  let body: unknown;
  try {
    body = JSON.parse(await readBody(req));
  } catch (error) {
    const tooLarge = error instanceof BadRequest;
    return respond(res, tooLarge ? 413 : 400, { error: tooLarge ? error.message : 'ERR the body is not valid JSON' });
  }
  try {
    if (path === '') {
      const reply = await redis.single(toCommand(body));
      return reply instanceof ReplyError
        ? respond(res, 400, { error: reply.message })
        : respond(res, 200, { result: toJson(reply, encoding) });
    }
    if (!Array.isArray(body) || body.length === 0) {
      throw new BadRequest('ERR the body must be a non-empty array of commands');
    }
    const commands = body.map(toCommand);
    if (path === '/pipeline') {
      const replies = await redis.pipeline(commands);
      return respond(res, 200, replies.map((reply) => entry(reply, encoding)));
    }
    const reply = await redis.multiExec(commands);
    return reply instanceof ReplyError
      ? respond(res, 400, { error: reply.message })
      : respond(res, 200, reply.map((item) => entry(item, encoding)));
  } catch (error) {
    if (error instanceof BadRequest) return respond(res, 400, { error: error.message });
    // redis-server unreachable: a server-side failure, not the caller's.
    return respond(res, 500, { error: `ERR redis-server unavailable: ${(error as Error).message}` });
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

function respond(res: ServerResponse, status: number, payload: unknown): void {
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
  private readonly port: number;
  private shared: Promise<RespConnection> | null = null;
  private readonly idle: RespConnection[] = [];
  private readonly borrowed = new Set<RespConnection>();
  /** sha1(script as sent) -> sha1(script as run), for scripts whose shebang flags were stripped. */
  private readonly shas = new Map<string, string>();
  private closed = false;

  constructor(port: number) {
    this.port = port;
  }

  async single(command: string[]): Promise<Reply> {
    const name = command[0]!.toLowerCase();
    if (REFUSED_COMMANDS.has(name)) return new ReplyError(`ERR command '${name}' is not available over REST`);
    const { args, reply } = this.rewrite(command);
    const [raw] = isBlocking(command) ? await this.onOwnConnection([args]) : await this.onShared([args]);
    return reply(raw!);
  }

  async pipeline(commands: string[][]): Promise<Reply[]> {
    const refused = commands.map((c) => REFUSED_COMMANDS.has(c[0]!.toLowerCase()));
    const rewritten = commands.filter((_, i) => !refused[i]).map((c) => this.rewrite(c));
    const args = rewritten.map((r) => r.args);
    const raw = args.length === 0 ? [] : commands.some(isBlocking) ? await this.onOwnConnection(args) : await this.onShared(args);
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
    const raw = await this.onShared([['multi'], ...rewritten.map((r) => r.args), ['exec']]);
    const result = raw[raw.length - 1]!;
    if (result instanceof ReplyError) return result; // EXECABORT
    if (!Array.isArray(result)) return new ReplyError('ERR transaction aborted');
    return result.map((reply, i) => rewritten[i]!.reply(reply));
  }

  close(): void {
    this.closed = true;
    void this.shared?.then((conn) => conn.close(), () => undefined);
    for (const conn of [...this.idle, ...this.borrowed]) conn.close();
    this.idle.length = 0;
    this.borrowed.clear();
  }

  private async onShared(commands: string[][]): Promise<Reply[]> {
    if (this.closed) throw new Error('stand-in closed');
    let conn = await this.sharedConnection();
    if (conn.dead) {
      this.shared = null; // redis-server restarted or the socket dropped: reconnect once
      conn = await this.sharedConnection();
    }
    return conn.send(commands);
  }

  private sharedConnection(): Promise<RespConnection> {
    if (!this.shared) {
      this.shared = RespConnection.open(this.port);
      this.shared.catch(() => (this.shared = null));
    }
    return this.shared;
  }

  private async onOwnConnection(commands: string[][]): Promise<Reply[]> {
    if (this.closed) throw new Error('stand-in closed');
    const conn = this.idle.pop() ?? (await RespConnection.open(this.port));
    this.borrowed.add(conn);
    try {
      return await conn.send(commands);
    } finally {
      this.borrowed.delete(conn);
      if (!conn.dead && !this.closed && this.idle.length < MAX_IDLE_BLOCKING_CONNECTIONS) this.idle.push(conn);
      else conn.close();
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
