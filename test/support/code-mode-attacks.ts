/**
 * Code that attacks code mode's sandbox by loading it: each program keeps its sandbox busy inside
 * builtins no guard reaches, loops for ever, recurses, or grows its memory until a bound stops it.
 * The stress suite (test/integration/code-mode-attacks.stress.test.ts) checks what each ends in and
 * that another tenant is answered meanwhile; `npm run bench -- code-mode-attacks` measures what
 * each costs that tenant's latency.
 */
import type { StoppingLimit } from '../../shared/codemode/limits.ts';

/** One attack: what it is, its code, and every bound that may legitimately stop it (which fires first is the machine's speed). */
export interface CodeModeAttack {
  name: string;
  code: string;
  limits: readonly StoppingLimit[];
}

/** Every bound that may stop code which keeps its sandbox busy. */
const BUSY: readonly StoppingLimit[] = ['blocking_ms', 'cpu_ms', 'memory_mb', 'guard_ticks', 'wall_time_ms'];

/**
 * The attacks, the heaviest first. Each runs until a bound stops it, whatever the machine's speed:
 * a finite one could end before any bound on a fast machine.
 */
export const CODE_MODE_ATTACKS: readonly CodeModeAttack[] = [
  {
    // One call of replace builds 56 million parts: V8 aborted the whole local workerd that ran it when the sandbox lived in the gateway's.
    name: 'string expansion to hundreds of MB in one replace call',
    code: "async () => 'x'.repeat(7e6).replace(/x/g, '$&$&$&$&$&$&$&$&')",
    limits: BUSY,
  },
  {
    name: 'replace calls over 8 million characters, without end',
    code: "async () => { const s = 'ab'.repeat(4e6); let n = 0; for (;;) n += s.replace(/a/g, 'xy').length; }",
    limits: BUSY,
  },
  {
    name: 'sorting 2 million strings, without end',
    code: 'async () => { const a = []; for (let i = 0; i < 2e6; i++) a.push(String((i * 7919) % 2e6)); for (;;) { a.reverse(); a.sort(); } }',
    limits: BUSY,
  },
  {
    name: 'JSON.parse of a 20 MB string, without end',
    code: "async () => { const s = JSON.stringify(Array.from({ length: 1e6 }, (_, i) => ({ i, t: 'x' }))); let n = 0; for (;;) n += JSON.parse(s).length; }",
    limits: BUSY,
  },
  {
    name: 'a regular expression with a backreference, which backtracks exponentially',
    code: "async () => /(x+x+)+y\\1/.test('x'.repeat(40))",
    limits: ['blocking_ms', 'cpu_ms', 'wall_time_ms'],
  },
  { name: 'an endless synchronous loop', code: 'async () => { for (;;) {} }', limits: BUSY },
  { name: 'an endless loop of microtasks', code: 'async () => { for (;;) await null; }', limits: BUSY },
  {
    name: 'an endless loop that yields to timers and burns CPU between them',
    code: "async () => { for (;;) { await new Promise((resolve) => setTimeout(resolve, 0)); 'ab'.repeat(1e6).replace(/a/g, 'b'); } }",
    limits: BUSY,
  },
  {
    name: 'recursion that catches its own stack overflow and recurses again',
    code: 'async () => { const f = (n) => { try { return f(n + 1); } catch { return f(n + 1); } }; return f(0); }',
    limits: BUSY,
  },
  {
    name: 'strings kept until the memory is gone',
    code: "async () => { const keep = []; for (;;) keep.push('x'.repeat(1e6) + Math.random()); }",
    limits: BUSY,
  },
  {
    name: "buffers kept until the memory is gone (outside V8's heap)",
    code: 'async () => { const keep = []; for (;;) keep.push(new ArrayBuffer(8e6)); }',
    limits: BUSY,
  },
];
