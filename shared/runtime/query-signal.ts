/**
 * One database client per request, and still a call that stops with its caller: the statements a
 * piece of work sends are bound to its abort signal through its async context (AsyncLocalStorage,
 * which Workers provide with Node.js compatibility, on by default since the 2026-08-04
 * compatibility date), not through the client. The client's trace, written after the answer, is
 * outside that context and never aborted with the caller.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { neonConfig } from '@neondatabase/serverless';

/** The signal of the work running now, when it runs inside {@link withQuerySignal}. */
const querySignal = new AsyncLocalStorage<AbortSignal>();

/**
 * Every statement goes through the driver's `fetchFunction` (its documented setting for a fetch
 * of one's own): the global `fetch`, with the signal of the work that sent it, if any. A client's
 * own `signal` (createDb's option, through the driver's `fetchOptions`) comes in `init` and wins.
 */
neonConfig.fetchFunction = (url: string, init: RequestInit) => fetch(url, { signal: querySignal.getStore(), ...init });

/**
 * Runs `work` with every statement it sends, through any client, bound to `signal`: aborting it
 * aborts those in flight and fails those sent after. What runs after `work`, outside its async
 * context, is not bound.
 *
 * @example
 * const outcome = await withQuerySignal(call.signal, () => tool.execute(input, { db, ... }));
 * scope.waitUntil(recordTrace(db, outcome)); // the same client, not aborted with the caller
 */
export function withQuerySignal<T>(signal: AbortSignal, work: () => T | PromiseLike<T>): Promise<T> {
  // Awaited inside: drizzle's queries are lazy, sent when awaited, so a query returned as is
  // would otherwise be sent outside the context.
  return querySignal.run(signal, async () => await work());
}
