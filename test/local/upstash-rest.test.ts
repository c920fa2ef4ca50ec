import { Ratelimit } from '@upstash/ratelimit';
import { Redis } from '@upstash/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, startUpstashStandIn } from '../../local/upstash-rest.ts';

const TOKEN = 'test-token';
const redisServer = await startRedisServer();
if (!redisServer) {
  console.warn('\n*** redis-server is not installed: SKIPPING the Upstash REST stand-in tests (apt-get install redis-server) ***\n');
}

describe.skipIf(!redisServer)('Upstash REST stand-in over redis-server', () => {
  let standIn: Awaited<ReturnType<typeof startUpstashStandIn>>;
  let redis: Redis;

  /** A raw request, to check the wire format and bad input. */
  const post = async (path: string, body: string, headers: Record<string, string> = {}) => {
    const res = await fetch(standIn.url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: res.status, json: (await res.json()) as unknown };
  };

  beforeAll(async () => {
    standIn = await startUpstashStandIn({ redisPort: redisServer!.port, token: TOKEN });
    redis = new Redis({ url: standIn.url, token: TOKEN, enableTelemetry: false });
  });

  afterAll(async () => {
    await standIn?.close();
    await redisServer?.stop();
  });

  it('set/get, incr and explicit nulls', async () => {
    expect(await redis.set('greeting', 'hello')).toBe('OK');
    expect(await redis.get('greeting')).toBe('hello');
    expect(await redis.get('missing')).toBeNull();
    expect(await redis.incr('counter')).toBe(1);
    expect(await redis.incrby('counter', 41)).toBe(42);
    expect(await redis.get('counter')).toBe(42); // the client parses "42"
    expect(await redis.ping()).toBe('PONG');
    expect(await post('', '["get","missing"]')).toEqual({ status: 200, json: { result: null } });
  });

  it('encodes every string in base64 when asked, status replies included', async () => {
    expect((await post('', '["ping"]', { 'upstash-encoding': 'base64' })).json).toEqual({ result: btoa('PONG') });
    expect((await post('', '["set","k","v"]', { 'upstash-encoding': 'base64' })).json).toEqual({ result: btoa('OK') });
    expect((await post('', '["incr","n64"]', { 'upstash-encoding': 'base64' })).json).toEqual({ result: 1 });
    expect((await post('', '["ping"]')).json).toEqual({ result: 'PONG' });
  });

  it('keeps unicode and binary-ish strings intact', async () => {
    // The client JSON-parses replies by default ('"quoted"' would come back unquoted): read them raw.
    const raw = new Redis({ url: standIn.url, token: TOKEN, enableTelemetry: false, automaticDeserialization: false });
    const values = ['héllo wörld', '🙂 emoji 𝄞', 'nul\u0000byte', '\u00ff\u00fe', 'line\r\nbreak', '"quoted"', '42', ' ', '=+/'];
    for (const [i, value] of values.entries()) {
      await raw.set(`text:${i}`, value);
      expect(await raw.get(`text:${i}`)).toBe(value);
    }
    await redis.set('json', { a: [1, 'ü'] });
    expect(await redis.get('json')).toEqual({ a: [1, 'ü'] });
  });

  it('zadd/zrange with scores', async () => {
    await redis.zadd('board', { score: 2, member: 'b' }, { score: 1, member: 'a' }, { score: 3, member: 'ç' });
    expect(await redis.zrange('board', 0, -1)).toEqual(['a', 'b', 'ç']);
    expect(await redis.zrange('board', 0, 0, { withScores: true })).toEqual(['a', 1]);
    expect(await redis.zcard('board')).toBe(3);
  });

  it('eval with keys and args, nested replies', async () => {
    const reply = await redis.eval('return {KEYS[1], ARGV[1], tonumber(ARGV[2]) + 1, {"x"}}', ['k1'], ['a1', '41']);
    expect(reply).toEqual(['k1', 'a1', 42, ['x']]);
  });

  it('createScript: EVALSHA, with the EVAL fallback on NOSCRIPT', async () => {
    await redis.scriptFlush();
    const script = redis.createScript<number>('return redis.call("INCRBY", KEYS[1], ARGV[1])');
    expect(await script.exec(['scripted'], ['5'])).toBe(5); // NOSCRIPT -> EVAL
    expect(await script.evalsha(['scripted'], ['5'])).toBe(10); // now cached
    await redis.scriptFlush();
    await expect(script.evalsha(['scripted'], ['1'])).rejects.toThrow(/NOSCRIPT/);
    expect(await script.exec(['scripted'], ['1'])).toBe(11);
  });

  it('strips Upstash-only shebang flags and keeps the original sha1 working', async () => {
    const source = '#!lua flags=allow-key-locking\nreturn redis.call("INCR", KEYS[1])';
    const script = redis.createScript<number>(source);
    expect(await script.exec(['flagged'], [])).toBe(1);
    expect(await script.evalsha(['flagged'], [])).toBe(2);
    const sha = await redis.scriptLoad(source);
    expect(await redis.scriptExists(sha)).toEqual([1]);
    // Flags Redis knows stay.
    expect(await redis.eval('#!lua flags=no-writes,allow-key-locking\nreturn 7', [], [])).toBe(7);
  });

  it('pipeline, with per-entry errors', async () => {
    const results = await redis.pipeline().set('p', 'v').incr('p-count').get('p').exec();
    expect(results).toEqual(['OK', 1, 'v']);
    const withError = await redis.pipeline().set('p', 'v').incr('p').get('p').exec({ keepErrors: true });
    expect(withError[0]).toEqual({ result: 'OK', error: undefined });
    expect(withError[1]!.error).toMatch(/^ERR value is not an integer/);
    expect(withError[2]).toEqual({ result: 'v', error: undefined });
  });

  it('multi-exec, and EXECABORT as a 400', async () => {
    expect(await redis.multi().set('m', '1').incr('m').get('m').exec()).toEqual(['OK', 2, 2]);
    const aborted = await post('/multi-exec', '[["set","m","1"],["nosuchcommand"]]');
    expect(aborted.status).toBe(400);
    expect((aborted.json as { error: string }).error).toMatch(/^EXECABORT/);
  });

  it('passes Redis errors through verbatim as 400', async () => {
    await redis.set('text', 'abc');
    await expect(redis.incr('text')).rejects.toThrow('ERR value is not an integer or out of range');
    await expect(redis.lpush('text', 'x')).rejects.toThrow(/WRONGTYPE Operation against a key/);
    expect(await post('', '["lpush","text","x"]')).toEqual({
      status: 400,
      json: { error: 'WRONGTYPE Operation against a key holding the wrong kind of value' },
    });
    expect(await post('', '["nosuchcommand"]')).toEqual({
      status: 400,
      json: { error: expect.stringMatching(/^ERR unknown command 'nosuchcommand'/) },
    });
  });

  it('refuses a wrong token with 401', async () => {
    const intruder = new Redis({ url: standIn.url, token: 'wrong', enableTelemetry: false, retry: false });
    await expect(intruder.get('greeting')).rejects.toThrow(/Unauthorized/);
    const res = await fetch(standIn.url, { method: 'POST', body: '["ping"]' });
    expect(res.status).toBe(401);
  });

  it('answers bad input with an error and keeps serving', async () => {
    const bad: [string, string][] = [
      ['', 'not json'],
      ['', '{"set":"k"}'],
      ['', '[]'],
      ['', '[["nested"]]'],
      ['', '["set",{"a":1},"v"]'],
      ['', '["get",null]'],
      ['', '[1e999]'],
      ['/pipeline', '[]'],
      ['/pipeline', '["get","k"]'],
      ['/multi-exec', '[[]]'],
      ['', '["multi"]'],
      ['', '["subscribe","ch"]'],
    ];
    for (const [path, body] of bad) {
      const { status, json } = await post(path, body);
      expect(status, body).toBe(400);
      expect(json).toEqual({ error: expect.any(String) });
    }
    expect((await post('/nowhere', '["ping"]')).status).toBe(404);
    expect((await fetch(standIn.url, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(405);
    const pipeline = await post('/pipeline', '[["ping"],["multi"]]');
    expect(pipeline.json).toEqual([{ result: 'PONG' }, { error: expect.stringMatching(/not available/) }]);
    expect(await redis.ping()).toBe('PONG');
  });

  it('serves BLPOP on a connection of its own, without blocking other commands', async () => {
    const popped = redis.exec<[string, string] | null>(['blpop', 'jobs', '5']);
    expect(await redis.get('greeting')).toBe('hello'); // answered while BLPOP waits
    await redis.rpush('jobs', 'job-1');
    expect(await popped).toEqual(['jobs', 'job-1']);
    expect(await redis.exec(['blpop', 'empty-list', '0.05'])).toBeNull();
  });

  it('@upstash/ratelimit slidingWindow works against it', async () => {
    const limiter = new Ratelimit({
      redis,
      limiter: Ratelimit.slidingWindow(3, '10 s'),
      prefix: 'rl-test',
      ephemeralCache: false,
    });
    const outcomes = [];
    for (let i = 0; i < 5; i++) outcomes.push((await limiter.limit('user-1')).success);
    expect(outcomes).toEqual([true, true, true, false, false]);
    expect((await limiter.limit('user-2')).success).toBe(true);
  });

  it('answers 500 with an error when redis-server is gone', async () => {
    const other = (await startRedisServer())!;
    const orphan = await startUpstashStandIn({ redisPort: other.port, token: TOKEN });
    try {
      const client = new Redis({ url: orphan.url, token: TOKEN, enableTelemetry: false, retry: false });
      expect(await client.ping()).toBe('PONG');
      await other.stop();
      await expect(client.ping()).rejects.toThrow(/redis-server unavailable/);
      await expect(client.ping()).rejects.toThrow(/redis-server unavailable/);
    } finally {
      await orphan.close();
      await other.stop();
    }
  });
});
