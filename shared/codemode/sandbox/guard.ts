/**
 * The guard the agent's code calls at the start of every loop body and function body (the calls
 * are inserted by ../guard.ts). It counts; every 1,024 counts it also reads the clock, which moves
 * during synchronous code under workerd locally. A timer beats while the event loop turns, so code
 * that keeps it from turning (a synchronous loop, a loop of microtasks) for `blockingMs` is seen.
 * Once it has stopped the code it throws at every later call, so code that catches its error and
 * loops on is stopped at its next iteration; `stopped()` names the bound even then.
 */
import type { SandboxAnswer } from '../protocol.ts';
import { now, RangeErrorConstructor, schedule, unschedule } from './builtins.ts';

/** The bound the guard stopped the code at, or null: what the sandbox's answer says. */
export type Stopped = SandboxAnswer['stopped'];

/** The guard's bounds. */
export interface GuardLimits {
  guardTicks: number;
  blockingMs: number;
  wallTimeMs: number;
}

/** A running guard. */
export interface Guard {
  /** What the code calls: throws once a bound is reached. */
  tick: () => void;
  /** The bound reached, if any. */
  stopped(): Stopped;
  /** Stops the heartbeat: the code has answered. */
  end(): void;
}

/** How often the heartbeat beats, in ms. */
const BEAT_MS = 100;

const MESSAGES: Record<Exclude<Stopped, null>, (limits: GuardLimits) => string> = {
  guard_ticks: (limits) =>
    `The code was stopped after ${limits.guardTicks} loop iterations and function calls, the most one execution may run.`,
  wall_time_ms: (limits) => `The code was stopped after ${limits.wallTimeMs} ms, the most one execution may take.`,
  blocking_ms: (limits) =>
    `The code was stopped after running ${limits.blockingMs} ms without ever letting other work run (no await of a tool call or a timer).`,
};

/** Starts a guard (and its heartbeat) for one execution. */
export function createGuard(limits: GuardLimits): Guard {
  let ticks = 0;
  let stopped: Stopped = null;
  const deadline = now() + limits.wallTimeMs;
  let beat = now();
  let heartbeat: unknown;
  const beating = () => {
    beat = now();
    heartbeat = schedule(beating, BEAT_MS);
  };
  beating();
  const tick = () => {
    if (stopped === null) {
      if (++ticks > limits.guardTicks) stopped = 'guard_ticks';
      else if ((ticks & 1023) !== 0) return;
      else if (now() > deadline) stopped = 'wall_time_ms';
      else if (now() - beat > limits.blockingMs) stopped = 'blocking_ms';
      else return;
    }
    throw new RangeErrorConstructor(MESSAGES[stopped](limits));
  };
  return { tick, stopped: () => stopped, end: () => unschedule(heartbeat) };
}
