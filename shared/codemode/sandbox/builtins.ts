/**
 * The builtins the execution module uses, taken once when the module is evaluated: before the
 * agent's code runs. That code runs in the same isolate and may replace any global and any
 * prototype's method; it cannot change what these functions do. The module calls builtins only
 * through these references (methods through {@link apply}), and avoids the syntax that reads a
 * prototype the code can patch: spread and for-of over arrays, array destructuring, assignment to
 * a new index (a setter on `Array.prototype` would catch it), `instanceof`.
 */

/** `Reflect.apply`: calls a captured method on a value without reading the value's prototype. */
export const apply = Reflect.apply;
const define = Reflect.defineProperty;
const construct = Reflect.construct;
export { construct };

/** The global object as it was, for the timers (workerd's need their receiver). */
const realm = globalThis;

export const stringify = JSON.stringify;
export const parse = JSON.parse;
export const freeze = Object.freeze;
export const create = Object.create;
export const isArray = Array.isArray;
export const ProxyConstructor = Proxy;
export const RangeErrorConstructor = RangeError;
export const StringConstructor = String;
export const NumberConstructor = Number;
export const max = Math.max;

const dateNow = Date.now;
const setTimer = setTimeout;
const clearTimer = clearTimeout;
const stringSlice = String.prototype.slice;

/** Milliseconds since the epoch. */
export function now(): number {
  return apply(dateNow, undefined, []) as number;
}

/** `setTimeout(callback, ms)`. */
export function schedule(callback: () => void, ms: number): unknown {
  return apply(setTimer, realm, [callback, ms]);
}

/** `clearTimeout(handle)`. */
export function unschedule(handle: unknown): void {
  apply(clearTimer, realm, [handle]);
}

/** `text.slice(from, to)`. */
export function sliceString(text: string, from: number, to?: number): string {
  return apply(stringSlice, text, [from, to]) as string;
}

/** Appends `item` to `list` as an own property: no setter the code put on `Array.prototype` sees it. */
export function append<T>(list: T[], item: T): void {
  define(list, list.length, { __proto__: null, value: item, writable: true, enumerable: true, configurable: true } as PropertyDescriptor);
}

/** What a thrown value says, bounded: its `name` and `message` when it has them, else its type and text. */
export function describe(error: unknown): { name: string; message: string } {
  try {
    if (typeof error === 'object' && error !== null) {
      const { name, message } = error as { name?: unknown; message?: unknown };
      if (typeof message === 'string')
        return { name: sliceString(StringConstructor(name), 0, 100), message: sliceString(message, 0, 2000) };
    }
    return { name: typeof error, message: sliceString(StringConstructor(error), 0, 2000) };
  } catch {
    return { name: 'unknown', message: 'a value that cannot be described' };
  }
}
