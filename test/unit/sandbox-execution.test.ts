/**
 * The execution module's parts, in Node: the builtins it took before the agent's code ran keep
 * working whatever the code replaces, the console keeps within its bounds, the guard stops what
 * never stops, and the allocation cap refuses one huge allocation (installed on a realm of its own
 * here, so the test process keeps its builtins). The module as a whole runs in the sandbox in the
 * integration suites (code-mode-sandbox.test.ts replaces every builtin it could reach).
 */
import { createContext, runInContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { capAllocations } from '../../shared/codemode/sandbox/allocations.ts';
import { append, describe as describeError, sliceString, stringify } from '../../shared/codemode/sandbox/builtins.ts';
import { createConsole } from '../../shared/codemode/sandbox/console.ts';
import { createGuard } from '../../shared/codemode/sandbox/guard.ts';

describe('builtins taken before the code runs', () => {
  const restore: (() => void)[] = [];
  afterEach(() => restore.splice(0).forEach((undo) => undo()));
  const replace = <T extends object>(target: T, name: keyof T & string, value: unknown) => {
    const original = Object.getOwnPropertyDescriptor(target, name)!;
    Object.defineProperty(target, name, { value, configurable: true, writable: true });
    restore.push(() => Object.defineProperty(target, name, original));
  };

  it('work after JSON, String.prototype.slice and Reflect.apply are replaced, and append past a setter on an index', () => {
    replace(JSON, 'stringify', () => 'forged');
    replace(String.prototype, 'slice', () => 'forged');
    replace(Reflect, 'apply', () => 'forged');
    const list: string[] = [];
    Object.defineProperty(Array.prototype, '0', {
      set() {
        throw new Error('setter');
      },
      configurable: true,
    });
    restore.push(() => delete (Array.prototype as unknown as Record<string, unknown>)['0']);
    append(list, 'kept');
    expect(Object.getOwnPropertyDescriptor(list, '0')?.value).toBe('kept');
    expect(stringify({ a: 1 })).toBe('{"a":1}');
    expect(sliceString('abcdef', 1, 3)).toBe('bc');
  });

  it('describe whatever was thrown, bounded, even a value whose getters throw', () => {
    expect(describeError(new TypeError('x'.repeat(5_000)))).toEqual({ name: 'TypeError', message: 'x'.repeat(2_000) });
    expect(describeError('plain')).toEqual({ name: 'string', message: 'plain' });
    const hostile = Object.defineProperty({}, 'message', {
      get() {
        throw new Error('no');
      },
    });
    expect(describeError(hostile)).toEqual({ name: 'unknown', message: 'a value that cannot be described' });
  });
});

describe('the console', () => {
  it('keeps lines within the bounds of lines and characters, and counts the rest', () => {
    const bounded = createConsole({ logLines: 3, logChars: 20 });
    bounded.console.log('one', 1, { a: [1] });
    bounded.console.warn('two');
    bounded.console.error('x'.repeat(100));
    bounded.console.log('four');
    expect(bounded.logs).toEqual(['one 1 {"a":[1]}', '[warn']);
    expect(bounded.dropped()).toBe(2);
    expect(Object.isFrozen(bounded.console)).toBe(true);
  });
});

describe('the guard', () => {
  it('stops code past its ticks, and throws at every later call', () => {
    const guard = createGuard({ guardTicks: 1_000, blockingMs: 60_000, wallTimeMs: 60_000 });
    try {
      for (let i = 0; i < 1_000; i++) guard.tick();
      expect(() => guard.tick()).toThrow(/1000 loop iterations/);
      expect(() => guard.tick()).toThrow(RangeError);
      expect(guard.stopped()).toBe('guard_ticks');
    } finally {
      guard.end();
    }
  });

  it('stops code that keeps the event loop from turning past its bound', () => {
    const guard = createGuard({ guardTicks: 1e12, blockingMs: 20, wallTimeMs: 60_000 });
    try {
      // Synchronous: the heartbeat cannot beat while this loop runs, whatever the machine's speed.
      const started = Date.now();
      let thrown: unknown;
      while (!thrown && Date.now() - started < 60_000) {
        try {
          guard.tick();
        } catch (error) {
          thrown = error;
        }
      }
      expect(String(thrown)).toMatch(/without ever letting other work run/);
      expect(guard.stopped()).toBe('blocking_ms');
    } finally {
      guard.end();
    }
  });
});

describe('the allocation cap', () => {
  it('refuses one builtin call that would allocate more than the cap, in the realm it is installed on', () => {
    const context = createContext();
    capAllocations(1_000, runInContext('globalThis', context) as typeof globalThis);
    const run = (code: string) => runInContext(code, context) as unknown;
    for (const code of [
      "'x'.repeat(2000)",
      "''.padEnd(5000)",
      'new Array(5000)',
      'Array(5000)',
      'Array.from({ length: 5000 })',
      'new Uint8Array(2000)',
      'new Float64Array(200)',
      'new ArrayBuffer(2000)',
      '[1, 2].concat(new Array(999))',
      "new Array(500).fill(0).join('xxxxx')",
    ])
      expect(() => run(code), code).toThrow(/one execution may allocate at once/);
    expect(run("'x'.repeat(10).length")).toBe(10);
    expect(run('new Array(10).fill(1).length')).toBe(10);
    expect(run('new Uint8Array(10).length')).toBe(10);
    expect(run('[] instanceof Array && new Array(3) instanceof Array')).toBe(true);
    // The test process's own builtins are untouched.
    expect('x'.repeat(2_000)).toHaveLength(2_000);
  });
});
