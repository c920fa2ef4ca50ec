/**
 * Code mode's attacks that load the machine on purpose (the stress lane; the programs are in
 * test/support/code-mode-attacks.ts): string expansion to hundreds of MB, builtins that run for
 * seconds inside one call where no guard reaches (replace, sort, JSON.parse of large strings),
 * regular expressions V8's linear engine cannot run (backreferences), endless synchronous and
 * asynchronous loops, recursion that catches its own overflow, memory grown until the sandbox's
 * bound, CPU burnt in a loop that yields, and a thousand tool calls.
 *
 * Each runs while another tenant keeps calling a tool directly and asking /health (underAttack):
 * the attacker gets a failure naming one of the bounds that may stop its code (never which one:
 * a machine's speed decides that) and an execution row; the victim gets an answer to every
 * request; the next execution runs. How much the victim's latency grows is measured, not asserted:
 * `npm run bench -- code-mode-attacks`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { CODE_MODE_ATTACKS as ATTACKS } from '../support/code-mode-attacks.ts';
import { createKey, createProject } from './helpers.ts';
import { executionRow, expectStopped, expectUnharmed, failureOf, resultOf, runCodeOver, underAttack } from './code-mode-helpers.ts';

let key: string;
let victimKey: string;

beforeAll(async () => {
  key = (await createKey(await createProject('Code mode stress attacks'))).key;
  victimKey = (await createKey(await createProject('Code mode stress victim', { rateLimitPerMinute: 100_000 }))).key;
}, 60_000);

describe('attacks that load the machine', { timeout: 180_000 }, () => {
  for (const { name, code, limits } of ATTACKS) {
    it(`${name}: stopped at a bound, another tenant answered throughout, the next execution runs`, async () => {
      const { attack, victim } = await underAttack(() => runCodeOver('http', code, { key }), victimKey);
      expectStopped(attack.body, limits);
      expectUnharmed(victim);
      await executionRow(attack.body.meta.trace_id);
      expect(resultOf((await runCodeOver('http', 'async () => 6 * 7', { key })).body).result).toBe(42);
    });
  }

  it('a thousand tool calls: 100 run, the others are refused unrun, another tenant answered throughout', async () => {
    const code =
      'async () => (await Promise.all(Array.from({ length: 1000 }, () => tools.listPlans({ limit: 1 })))).filter((a) => a.success).length';
    const { attack, victim } = await underAttack(() => runCodeOver('http', code, { key }), victimKey);
    const data = resultOf(attack.body);
    expect(data.result).toBe(100);
    expect(data.calls).toHaveLength(100);
    expect(data.calls_refused).toBe(900);
    expectUnharmed(victim);
  });

  it('several attacks at once each end in their own sandbox; a legitimate execution beside them runs', async () => {
    const attacks = ATTACKS.slice(1, 4).map(({ code }) => runCodeOver('http', code, { key }));
    const legitimate = runCodeOver('http', 'async () => (await tools.listPlans({ limit: 1 })).success', { key: victimKey });
    const [answered, ...stopped] = await Promise.all([legitimate, ...attacks]);
    expect(resultOf(answered!.body).result).toBe(true);
    for (const { body } of stopped) expect(failureOf(body).details).toMatchObject({ reason: 'code_limit' });
  });
});
