/**
 * The global semaphore under many callers, through the real pipeline in workerd against a real
 * Redis: the stress lane's part of concurrency.test.ts (a hundred calls take tens of seconds on a
 * busy machine).
 */
import { describe, expect, it } from 'vitest';
import { holdingTool } from './helpers.ts';
import { call, hasRedis, redis, redisEnv, semaphoreKeys, sleep } from './semaphore-calls.ts';

describe.skipIf(!hasRedis)('global semaphore through the pipeline, many callers', () => {
  it('100 concurrent calls holding 50-200 ms: an independent sampler never sees more than 10 holders', async () => {
    const { tool, state } = holdingTool();
    const callEnv = redisEnv();
    const holdersKey = `{${callEnv.CONCURRENCY_NAMESPACE}:semaphore}:holders`;
    let sampling = true;
    const samples: number[] = [];
    const sampler = (async () => {
      while (sampling) {
        samples.push(await redis!.zcard(holdersKey));
        await sleep(2);
      }
    })();
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => call(tool, { hold_ms: 50 + ((i * 37) % 151) }, callEnv)));
    sampling = false;
    await sampler;

    expect(answers.filter((a) => a.status !== 200).map((a) => a.body.error)).toEqual([]);
    expect(state.maxRunning).toBeLessThanOrEqual(10);
    // It saw holders (however often a busy machine let it look), and never more than the limit.
    expect(Math.max(...samples)).toBeGreaterThan(0);
    expect(Math.max(...samples)).toBeLessThanOrEqual(10);
    expect(await semaphoreKeys(callEnv.CONCURRENCY_NAMESPACE!)).toEqual([]);
  }, 60_000);
});
