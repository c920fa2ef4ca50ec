/** The time-limit reporter's amendment: a timeout says it was one, with the load average; any other failure is left alone. */
import { describe, expect, it } from 'vitest';
import { amendTimeouts, timeLimitNote } from '../reporters/time-limits.ts';

describe('amendTimeouts', () => {
  it('adds the time limit and the load average to a test or hook timeout, once', () => {
    const test = { name: 'TestTimeoutError', message: 'Test timed out in 30000ms.\nIf this is a long-running test, …' };
    const hook = { name: 'HookTimeoutError', message: 'Hook timed out in 60000ms.' };
    amendTimeouts([test, hook]);
    amendTimeouts([test]);
    expect(test.message).toMatch(
      /^timed out after 30000 ms \(a time limit, not a wrong result\); load average: \d+\.\d\d, \d+\.\d\d, \d+\.\d\d \(1, 5, 15 min\) on \d+ cores\nTest timed out in 30000ms\.\n/,
    );
    expect(test.message.match(/a time limit/g)).toHaveLength(1);
    expect(hook.message).toMatch(/^timed out after 60000 ms \(a time limit, not a wrong result\); load average: /);
  });

  it('leaves every other failure as it is', () => {
    const wrong = { name: 'AssertionError', message: 'expected 2 to be 3' };
    const mentions = { name: 'Error', message: 'the server timed out in 5ms' };
    amendTimeouts([wrong, mentions]);
    amendTimeouts(undefined);
    expect(wrong.message).toBe('expected 2 to be 3');
    expect(mentions.message).toBe('the server timed out in 5ms');
  });

  it('writes the load average with two decimals', () => {
    expect(timeLimitNote('100', [3.14159, 0.5, 12])).toMatch(/load average: 3\.14, 0\.50, 12\.00 \(1, 5, 15 min\)/);
  });
});
