/**
 * How the Upstash stand-in (local/upstash-rest.ts) talks to redis-server through ioredis, for
 * development and tests only: replies kept as the server sent them, blocking commands on
 * connections of their own, the commands REST does not offer refused, and Upstash-only script
 * flags stripped (with EVALSHA still answering to the sha1 of the script as the client sent it).
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { connectRedis, RedisReplyError } from './redis-server.ts';

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
export class ReplyError {
  readonly message: string;
  constructor(message: string) {
    this.message = message;
  }
}

/** A reply as redis-server sent it: simple and bulk strings are Buffers (binary safe), integers numbers, nil null. */
export type Reply = Buffer | number | null | ReplyError | Reply[];

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

/**
 * The Upstash stand-in's link to redis-server: one shared connection for ordinary commands,
 * pipelines and transactions, dedicated ones for blocking commands, an error reply for the commands
 * REST does not offer, and the script rewriting Upstash's shebang flags need.
 */
export class RedisLink {
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

  /** One command's reply (a refused command's error, as a reply). */
  async single(command: string[]): Promise<Reply> {
    const name = command[0]!.toLowerCase();
    if (REFUSED_COMMANDS.has(name)) return new ReplyError(`ERR command '${name}' is not available over REST`);
    const { args, reply } = this.rewrite(command);
    const [raw] = isBlocking(command) ? await this.onOwnConnection([args]) : await this.send(this.shared, [args]);
    return reply(raw!);
  }

  /** Each command's reply, in order, sent as one pipeline; a refused command gets its error and is not sent. */
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

  /** Closes every connection; later commands fail. */
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
