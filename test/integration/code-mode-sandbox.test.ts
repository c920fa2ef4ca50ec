/**
 * Code mode's sandbox as an attacker meets it, through the real gateway: code that ends its own
 * sandbox (V8 out of memory), and code that hands back what the gateway must not trust (a result
 * nested 100,000 levels deep, 200,000 keys, replaced builtins, floods of logs). Each is judged for
 * the attacker (a failure naming the bound, or an answer that says what was cut; an execution row
 * either way) and, where the attack is heavy, for another tenant calling meanwhile (every request
 * answered). The machine-loading attacks are in code-mode-attacks.stress.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { CODE_MODE_ATTACKS } from '../support/code-mode-attacks.ts';
import { createKey, createProject } from './helpers.ts';
import { executionRow, expectStopped, expectUnharmed, failureOf, resultOf, runCodeOver, underAttack } from './code-mode-helpers.ts';

let key: string;
let victimKey: string;

beforeAll(async () => {
  key = (await createKey(await createProject('Code mode sandbox'))).key;
  victimKey = (await createKey(await createProject('Code mode sandbox victim', { rateLimitPerMinute: 100_000 }))).key;
}, 60_000);

describe('a sandbox that dies', { timeout: 120_000 }, () => {
  it("ends only its own sandbox when V8 runs out of memory in one builtin call; another tenant's calls are all answered", async () => {
    const [expansion] = CODE_MODE_ATTACKS;
    const { attack, victim } = await underAttack(() => runCodeOver('http', expansion!.code, { key }), victimKey);
    expectStopped(attack.body, expansion!.limits);
    expectUnharmed(victim);
    expect((await executionRow(attack.body.meta.trace_id)).tool).toBe('code');
    // The next execution gets a sandbox of its own, and runs.
    expect(resultOf((await runCodeOver('http', 'async () => 6 * 7', { key })).body).result).toBe(42);
  });
});

describe('what the sandbox hands back', { timeout: 60_000 }, () => {
  it('cuts a result nested 100,000 levels deep to the depth the answer keeps, and says so', async () => {
    const { status, body } = await runCodeOver('http', 'async () => { let v = []; for (let i = 0; i < 100000; i++) v = [v]; return v; }', {
      key,
    });
    expect(status).toBe(200);
    if (!body.success) throw new Error(body.message);
    expect(body.meta.truncated).toBe(true);
    expect(body.message).toMatch(/nested deeper than 64 levels/);
    expect(JSON.stringify(body.data).length).toBeLessThan(1_000);
    await executionRow(body.meta.trace_id);
  });

  it('cuts a result of 200,000 keys to the answer budget, and says so', async () => {
    const { status, body } = await runCodeOver(
      'http',
      'async () => { const o = {}; for (let i = 0; i < 200000; i++) o["k" + i] = i; return o; }',
      { key },
    );
    expect(status).toBe(200);
    if (!body.success) throw new Error(body.message);
    expect(body.meta.truncated).toBe(true);
    expect(body.message).toMatch(/characters of JSON, cut to about 24000/);
    const result = resultOf(body).result as Record<string, unknown>;
    expect(Object.keys(result).length).toBeLessThan(200_000);
    expect(result).toMatchObject({ k0: 0, k1: 1 });
    expect(Object.values(result)).toContain('--- TRUNCATED ---');
    await executionRow(body.meta.trace_id);
  });

  it('answers truthfully when the code replaced JSON, Array, String, Object, Reflect and Promise methods', async () => {
    const code = `async () => {
      const listed = await tools.listPlans({ limit: 1 });
      JSON.stringify = () => { throw new Error("stringify replaced"); };
      JSON.parse = () => ({ forged: true });
      Array.prototype.push = function () { return 0; };
      Array.prototype.map = () => ["forged"];
      Array.prototype.join = () => "forged";
      String.prototype.slice = () => "forged";
      Reflect.apply = () => "forged";
      Object.freeze = (x) => x;
      Object.defineProperty(Array.prototype, "0", { set() { throw new Error("index setter"); }, configurable: true });
      Object.defineProperty(Object.prototype, "logs", { get() { return ["forged"]; }, configurable: true });
      Object.defineProperty(Object.prototype, "stopped", { get() { return "forged"; }, configurable: true });
      Promise.prototype.then = function () { throw new Error("then replaced"); };
      console.log("after", 1, { a: [1, 2] });
      return { listed: listed.success, answer: 42 };
    }`;
    const { status, body } = await runCodeOver('http', code, { key });
    expect(status).toBe(200);
    const data = resultOf(body);
    expect(data.result).toEqual({ listed: true, answer: 42 });
    expect(data.logs).toEqual(['after 1 {"a":[1,2]}']);
    expect(data.calls.map((call) => [call.tool, call.success])).toEqual([['list-plans', true]]);
    await executionRow(body.meta.trace_id);
  });

  it('keeps a flood of logs within 100 lines and 8,000 characters, even through a patched Array.prototype.push', async () => {
    for (const code of [
      `async () => {
        const push = Array.prototype.push;
        Array.prototype.push = function (...items) { for (let i = 0; i < 50; i++) push.apply(this, items); return this.length; };
        for (let i = 0; i < 5000; i++) console.log("flood", i);
        return "done";
      }`,
      'async () => { for (let i = 0; i < 3; i++) console.log("x".repeat(7000000)); return "done"; }',
    ]) {
      const { body } = await runCodeOver('http', code, { key });
      const data = resultOf(body);
      expect(data.result).toBe('done');
      expect(data.logs.length).toBeLessThanOrEqual(100);
      expect(data.logs.join('').length).toBeLessThanOrEqual(8_000);
      expect(data.logs_dropped).toBeGreaterThan(0);
    }
  });

  it('refuses a call whose input nests 100,000 levels deep, keyed or not, before the gateway walks it', async () => {
    const code = 'async () => { let v = {}; for (let i = 0; i < 100000; i++) v = { v }; return (await tools.logMood(v)).error.code; }';
    for (const idempotencyKey of [undefined, `deep-${crypto.randomUUID()}`]) {
      const { body } = await runCodeOver('http', code, { key, idempotencyKey });
      expect(resultOf(body).result).toBe('VALIDATION_ERROR');
    }
  });

  it('stops a result whose toJSON never returns, naming the bound', async () => {
    const { body } = await runCodeOver('http', 'async () => ({ toJSON() { for (;;) {} } })', { key });
    expectStopped(body, ['guard_ticks', 'blocking_ms', 'cpu_ms', 'wall_time_ms']);
    expect(failureOf(body).details).toMatchObject({ calls: [] });
    await executionRow(body.meta.trace_id);
  });
});
