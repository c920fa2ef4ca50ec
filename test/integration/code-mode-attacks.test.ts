/**
 * Code mode's sandbox under attack, through the real gateway in workerd: code that reaches for the
 * network, the worker's secrets, tools outside its scope (a read-only grant's writes included),
 * other executions' globals, or that never stops, recurses, allocates without end, floods calls,
 * leaves rejections or keeps running after its answer. Each is judged by real effects: what Redis and the database hold afterwards, what the
 * tools saw, and that the gateway goes on answering.
 */
import { env } from 'cloudflare:workers';
import { Redis } from '@upstash/redis';
import { and, count, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { moodEntries, toolExecutions } from '../../drizzle/schema.ts';
import type { AnyTool } from '../../shared/core/tool.ts';
import { createGateway } from '../../shared/http/app.ts';
import { createKey, createProject, db, getJson, holdingTool, send, tenantA, moodRows } from './helpers.ts';
import { connect, ORIGIN } from './oauth-flow.ts';
import { expectStopped, failureOf, resultOf, runCodeOver, waitForRows } from './code-mode-helpers.ts';

let projectId: string;

const mood = (userId: string) => JSON.stringify({ user_id: userId, mood: 'sad', energy_level: 3, timestamp: '2030-06-01T08:00:00Z' });

beforeAll(async () => {
  projectId = await createProject('Code mode attacks');
}, 60_000);

describe('no network', () => {
  it.skipIf(!env.TEST_SERVICES.redisUrl)(
    'refuses fetch, connect and WebSocket from the code: a write sent to Redis over REST never lands',
    async () => {
      const { redisUrl, redisToken } = env.TEST_SERVICES;
      const marker = `code-mode-attack:${crypto.randomUUID()}`;
      const url = new URL(redisUrl);
      const code = `async () => {
      const tried = {};
      try { await fetch(${JSON.stringify(`${redisUrl}/set/${marker}/1`)}, { headers: { authorization: ${JSON.stringify(`Bearer ${redisToken}`)} } }); tried.fetch = "sent"; } catch (e) { tried.fetch = e.message; }
      try { const { connect } = await import("cloudflare:sockets"); const socket = connect(${JSON.stringify(`${url.hostname}:${url.port}`)}); await socket.opened; tried.connect = "opened"; } catch (e) { tried.connect = e.message; }
      try { new WebSocket(${JSON.stringify(redisUrl.replace(/^http/, 'ws'))}); tried.websocket = "opened"; } catch (e) { tried.websocket = e.message; }
      return tried;
    }`;
      const { body } = await runCodeOver('http', code, { key: (await createKey(projectId)).key });
      const tried = resultOf(body).result as Record<string, string>;
      for (const way of ['fetch', 'connect', 'websocket']) expect(tried[way], way).toMatch(/not permitted to access the internet/);
      // The real effect: the stand-in never saw the write.
      expect(await new Redis({ url: redisUrl, token: redisToken }).get(marker)).toBeNull();
    },
  );
});

describe('no secrets', () => {
  it('sees no env, no bindings, no database URL and not the key that called it; cannot build code from strings', async () => {
    const { key } = await createKey(projectId);
    const code = `async () => {
      const seen = { globals: Object.getOwnPropertyNames(globalThis), processEnv: Object.keys(globalThis.process?.env ?? {}), env: typeof env, self: Object.keys(self) };
      try { seen.eval = eval("1 + 1"); } catch (e) { seen.eval = e.name; }
      try { seen.fn = new Function("return globalThis")(); } catch (e) { seen.fn = e.name; }
      seen.toolsKeys = Object.keys(tools);
      seen.toolsProto = Object.getPrototypeOf(tools);
      return seen;
    }`;
    const { body } = await runCodeOver('http', code, { key });
    const seen = resultOf(body).result as Record<string, unknown>;
    expect(seen).toMatchObject({ processEnv: [], env: 'undefined', eval: 'EvalError', fn: 'EvalError', toolsKeys: [], toolsProto: null });
    const text = JSON.stringify(body);
    for (const secret of [key, env.DATABASE_URL!, env.TEST_SERVICES.redisToken].filter(Boolean)) expect(text).not.toContain(secret);
    expect(seen.globals).not.toContain('DATABASE_URL');
    expect(seen.globals).not.toContain('LOADER');
  });
});

describe('scope', () => {
  it("calls a tool outside the key's toolsets: PERMISSION_DENIED, nothing written; an unknown tool: UNKNOWN_TOOL", async () => {
    const userId = `attack-${crypto.randomUUID()}`;
    const code = `async () => [(await tools["log-mood"](${mood(userId)})).error.code, (await tools.dropTables({})).error.code, (await tools["__proto__"]({})).error.code]`;
    const { body } = await runCodeOver('http', code, { key: (await createKey(projectId, { toolsets: ['study'] })).key });
    expect(resultOf(body).result).toEqual(['PERMISSION_DENIED', 'UNKNOWN_TOOL', 'UNKNOWN_TOOL']);
    expect(await moodRows(projectId, userId)).toBe(0);
  });
});

describe('read-only grant', { timeout: 60_000 }, () => {
  it("runs a read-only OAuth grant's code: a write is PERMISSION_DENIED and writes nothing, a read runs", async () => {
    const { accessToken } = await connect(ORIGIN, { toolsets: ['table-tools', 'study'], access: 'read' });
    const userId = `attack-${crypto.randomUUID()}`;
    const code = `async () => [(await tools.logMood(${mood(userId)})).error?.code, (await tools.listPlans({ limit: 1 })).success]`;
    const response = await send(
      new Request(`${ORIGIN}/code`, {
        method: 'POST',
        headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ code }),
      }),
    );
    const body = (await response.json()) as Awaited<ReturnType<typeof runCodeOver>>['body'];
    expect(resultOf(body).result).toEqual(['PERMISSION_DENIED', true]);
    const [row] = await db
      .select({ n: count() })
      .from(moodEntries)
      .where(and(eq(moodEntries.projectId, tenantA.projectId), eq(moodEntries.userId, userId)));
    expect(row!.n).toBe(0);
  });
});

describe('isolation', () => {
  it('keeps prototype pollution inside one execution: the next execution and the host see none of it', async () => {
    const { key } = await createKey(projectId);
    const polluted = await runCodeOver(
      'http',
      `async () => {
      Object.prototype.polluted = "yes";
      Array.prototype.map = () => "hijacked";
      JSON.parse = () => ({ success: true, data: "forged" });
      const sent = await tools.listPlans(JSON.parse('{"__proto__": {"admin": true}, "limit": 1}'));
      return sent;
    }`,
      { key },
    );
    // The forged JSON.parse stands inside the sandbox only; the call itself was real and went through the pipeline.
    expect(resultOf(polluted.body).calls).toHaveLength(1);
    const next = await runCodeOver('http', 'async () => [({}).polluted ?? null, [1, 2].map((x) => x * 2), JSON.parse("[1]")]', { key });
    expect(resultOf(next.body).result).toEqual([null, [2, 4], [1]]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    // An input with a __proto__ key is refused by the pipeline's screening, as a direct call is.
    const screened = await runCodeOver(
      'http',
      `async () => (await tools.listPlans(JSON.parse('{"__proto__": {"admin": true}, "limit": 1}'))).error.code`,
      { key },
    );
    expect(resultOf(screened.body).result).toBe('VALIDATION_ERROR');
  });
});

describe('runaway code', { timeout: 120_000 }, () => {
  it('stops an endless loop, even one that catches the guard, and keeps serving other requests meanwhile', async () => {
    const { key } = await createKey(projectId);
    const [looped, health] = await Promise.all([
      runCodeOver('http', 'async () => { for (;;) { try { while (true) {} } catch {} } }', { key }),
      getJson('/health'),
    ]);
    expectStopped(looped.body, ['guard_ticks', 'blocking_ms', 'cpu_ms', 'wall_time_ms']);
    expect(failureOf(looped.body).message).toMatch(/limit (guard_ticks|blocking_ms|cpu_ms|wall_time_ms)/);
    expect(health.status).toBe(200);
    expect((await getJson('/health')).status).toBe(200);
  });

  it('stops runaway recursion and huge allocations with a failure naming what happened', async () => {
    const { key } = await createKey(projectId);
    // Recursion either overflows the stack (the code throws RangeError) or is stopped at a bound.
    const recursed = await runCodeOver('http', 'async () => { const f = (n) => f(n + 1) + 1; return f(0); }', { key });
    expect(failureOf(recursed.body).message).toMatch(/Maximum call stack size exceeded|limit (guard_ticks|blocking_ms|cpu_ms|memory_mb)/);
    for (const code of [
      'async () => "x".repeat(2 ** 28).length',
      'async () => new Array(5e7).fill(0).length',
      'async () => new Float64Array(2e8).length',
      'async () => { let a = [1]; for (let i = 0; i < 40; i++) a = a.concat(a); return a.length; }',
    ]) {
      const { body } = await runCodeOver('http', code, { key });
      expect(failureOf(body).message, code).toMatch(/more than the 8000000 one execution may allocate/);
    }
    for (const code of ['async () => { for (;;) "x".repeat(7000000); }', 'async () => { while (true) await null; }']) {
      const { body } = await runCodeOver('http', code, { key });
      expectStopped(body, ['guard_ticks', 'blocking_ms', 'cpu_ms', 'memory_mb', 'wall_time_ms']);
    }
    expect((await getJson('/health')).status).toBe(200);
  });

  it('finishes catastrophically backtracking regular expressions that V8 can finish in linear time', async () => {
    // Every local workerd runs with LOCAL_V8_FLAGS (local/wrangler-env.ts): past a bound of
    // backtracks V8 finishes these with its linear-time engine, and the match takes milliseconds.
    const code =
      "async () => [/(a+)+$/.test('a'.repeat(5000) + '!'), /(a|aa)+$/.test('a'.repeat(5000) + '!'), /^(\\w+\\s?)*$/.test('ab '.repeat(2000) + '!')]";
    const { body } = await runCodeOver('http', code, { key: (await createKey(projectId)).key });
    expect(resultOf(body).result).toEqual([false, false, false]);
    expect((await getJson('/health')).status).toBe(200);
  });

  it('answers a code that never settles at the wall-time limit', async () => {
    const { body } = await runCodeOver('http', 'async () => { await new Promise(() => {}); }', { key: (await createKey(projectId)).key });
    expectStopped(body, ['wall_time_ms']);
  });
});

describe('inner calls', { timeout: 120_000 }, () => {
  it('bounds thousands of calls to 100 real ones per execution; the rest are refused without running', async () => {
    const { body } = await runCodeOver(
      'http',
      'async () => { const answers = await Promise.all(Array.from({ length: 3000 }, () => tools.listPlans({ limit: 1 }))); return answers.filter((a) => a.success).length; }',
      { key: (await createKey(projectId)).key },
    );
    const data = resultOf(body);
    expect(data.result).toBe(100);
    expect(data.calls).toHaveLength(100);
    expect(data.calls_refused).toBe(2900);
    const rows = await waitForRows(
      () => db.select({ id: toolExecutions.id }).from(toolExecutions).where(eq(toolExecutions.parentExecutionId, body.meta.trace_id)),
      100,
    );
    expect(rows).toHaveLength(100);
  });

  it('runs at most 3 calls of one execution at once', async () => {
    const { tool, state } = holdingTool();
    const gateway = createGateway([tool as AnyTool]);
    const { body } = await runCodeOver(
      'http',
      'async () => (await Promise.all(Array.from({ length: 12 }, () => tools.hold({ hold_ms: 50 })))).every((a) => a.success)',
      { key: (await createKey(projectId)).key, worker: gateway },
    );
    expect(resultOf(body).result).toBe(true);
    expect(state.started).toHaveLength(12);
    expect(state.maxRunning).toBeLessThanOrEqual(3);
    expect(state.maxRunning).toBeGreaterThan(1);
  });

  it('20 executions at once, each with calls, all finish under the cap of 10: the executions hold no slot', async () => {
    const { tool, state } = holdingTool();
    const gateway = createGateway([tool as AnyTool]);
    const { key } = await createKey(projectId);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        runCodeOver('http', 'async () => (await Promise.all([1, 2, 3].map(() => tools.hold({ hold_ms: 100 })))).map((a) => a.success)', {
          key,
          worker: gateway,
        }),
      ),
    );
    for (const { body } of answers) expect(resultOf(body).result).toEqual([true, true, true]);
    expect(state.started).toHaveLength(60);
    expect(state.maxRunning).toBeLessThanOrEqual(10);
  });

  it('survives unhandled rejections, and lists exactly the calls that ran when the code answered without awaiting them', async () => {
    const { key } = await createKey(projectId);
    const late = `attack-${crypto.randomUUID()}`;
    const { body } = await runCodeOver(
      'http',
      `async () => {
      Promise.reject(new Error("nobody catches this"));
      setTimeout(() => tools.logMood(${mood(late)}), 0);
      return "answered";
    }`,
      { key },
    );
    const data = resultOf(body);
    expect(data.result).toBe('answered');
    expect(data.calls).toEqual([]);
    // A call not awaited either reached the host before the answer (then it ran, and the answer
    // waited for it and lists it) or after (then it was refused unrun): the answer and the rows agree.
    const pending = `attack-${crypto.randomUUID()}`;
    const unawaited = await runCodeOver('http', `async () => { tools.logMood(${mood(pending)}); return "not awaited"; }`, { key });
    const listed = resultOf(unawaited.body).calls.filter((call) => call.tool === 'log-mood' && call.success);
    expect(await moodRows(projectId, pending)).toBe(listed.length);
    // The timer's call came after its execution had answered: refused, nothing written.
    expect(await moodRows(projectId, late)).toBe(0);
    expect((await getJson('/health')).status).toBe(200);
  });
});

describe('answer size', () => {
  it('cuts a 5 MB result to the answer budget and says so', async () => {
    const { status, body } = await runCodeOver(
      'http',
      'async () => Array.from({ length: 5000 }, (_, i) => ({ i, text: "y".repeat(1000) }))',
      { key: (await createKey(projectId)).key },
    );
    expect(status).toBe(200);
    if (!body.success) throw new Error(body.message);
    expect(body.meta.truncated).toBe(true);
    expect(body.message).toMatch(/cut to about 24000/);
    expect(JSON.stringify(body.data).length).toBeLessThan(40_000);
  });

  it('keeps only the first lines of a flood of logs', async () => {
    const { body } = await runCodeOver(
      'http',
      'async () => { for (let i = 0; i < 100000; i++) console.log("line", i, "x".repeat(50)); return 1; }',
      { key: (await createKey(projectId)).key },
    );
    const data = resultOf(body) as unknown as { logs: string[]; logs_dropped: number };
    expect(data.logs.join('').length).toBeLessThanOrEqual(8_000);
    expect(data.logs_dropped).toBeGreaterThan(99_000);
  });
});

it('without a sandbox, both routes say how to enable code mode', async () => {
  const gateway = createGateway([]);
  const { SANDBOX: _sandbox, SANDBOX_URL: _url, ...withoutSandbox } = env as unknown as Record<string, unknown>;
  const worker = {
    fetch: (request: Request, _env: unknown, ctx: ExecutionContext) => gateway.fetch(request, withoutSandbox as never, ctx),
  };
  const { key } = await createKey(projectId);
  for (const [path, body] of [
    ['/code', { code: 'async () => 1' }],
    ['/mcp/code', { jsonrpc: '2.0', id: 1, method: 'tools/list' }],
  ] as const) {
    const response = await send(
      new Request(`http://edge-tools.test${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(body),
      }),
      worker,
    );
    const answer = (await response.json()) as { error: { code: string; hint: string } };
    expect(response.status, path).toBe(500);
    expect(answer.error.code).toBe('CONFIG_ERROR');
    expect(answer.error.hint).toContain('[[services]]');
  }
});
