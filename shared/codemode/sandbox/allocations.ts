/**
 * A cap on what one builtin call may allocate: `new Array(n)`, `fill`, `concat`, `join`, `repeat`,
 * `padStart`/`padEnd`, `Array.from`, typed arrays and `ArrayBuffer` refuse to make more than `cap`
 * elements, characters or bytes at once, with an error the code can read. Without it one such
 * call reaches the sandbox's memory limit in a single step, and the code learns nothing but that
 * its sandbox ended. Memory in total is the sandbox's limit (deployed, Cloudflare's; locally the
 * sandbox host's), not this.
 */
import {
  apply,
  construct,
  isArray,
  max,
  NumberConstructor,
  ProxyConstructor,
  RangeErrorConstructor,
  StringConstructor,
} from './builtins.ts';

/** The globals a cap is installed on: the sandbox's own, or another realm's in tests. */
type Realm = typeof globalThis;

const TYPED_ARRAYS = [
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float16Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
] as const;

/** Installs the cap on `realm`'s builtins. */
export function capAllocations(cap: number, realm: Realm): void {
  const check = (what: string, n: unknown) => {
    if (typeof n === 'number' && n > cap)
      throw new RangeErrorConstructor(`${what} of ${n} is more than the ${cap} one execution may allocate at once.`);
  };
  const wrapMethod = (proto: object, name: string, size: (self: unknown, args: unknown[]) => number) => {
    const original = (proto as Record<string, (...args: unknown[]) => unknown>)[name]!;
    Object.defineProperty(proto, name, {
      value: function (this: unknown, ...args: unknown[]) {
        check('A result', size(this, args));
        return apply(original, this, args);
      },
      writable: true,
      configurable: true,
    });
  };
  const lengthOf = (value: unknown) => (value as { length: number }).length;
  wrapMethod(realm.String.prototype, 'repeat', (self, args) => StringConstructor(self).length * NumberConstructor(args[0]));
  wrapMethod(realm.String.prototype, 'padStart', (_self, args) => NumberConstructor(args[0]));
  wrapMethod(realm.String.prototype, 'padEnd', (_self, args) => NumberConstructor(args[0]));
  wrapMethod(realm.Array.prototype, 'fill', (self) => lengthOf(self));
  wrapMethod(realm.Array.prototype, 'concat', (self, args) => {
    let total = lengthOf(self);
    for (let i = 0; i < args.length; i++) total += isArray(args[i]) ? lengthOf(args[i]) : 1;
    return total;
  });
  wrapMethod(realm.Array.prototype, 'join', (self, args) => lengthOf(self) * max(1, StringConstructor(args[0] ?? ',').length));
  const arrayFrom = realm.Array.from;
  realm.Array.from = function (this: unknown, ...args: unknown[]) {
    check('An array', (args[0] as { length?: unknown } | null | undefined)?.length);
    return apply(arrayFrom, this, args);
  } as typeof Array.from;
  const capConstructor = (name: string, bytes: number) => {
    const original = (realm as unknown as Record<string, (new (...args: unknown[]) => unknown) | undefined>)[name];
    if (typeof original !== 'function') return;
    const size = (args: unknown[]) => (typeof args[0] === 'number' ? args[0] * bytes : undefined);
    const capped = new ProxyConstructor(original, {
      __proto__: null,
      construct: (target: typeof original, args: unknown[], newTarget: unknown) => {
        check(`new ${name}`, size(args));
        check(`new ${name}`, (args[1] as { maxByteLength?: unknown } | undefined)?.maxByteLength);
        return construct(target, args, newTarget === capped ? target : (newTarget as typeof original));
      },
      apply: (target: typeof original, self: unknown, args: unknown[]) => {
        check(name, size(args));
        return apply(target as unknown as (...args: unknown[]) => unknown, self, args);
      },
    } as ProxyHandler<typeof original>);
    Object.defineProperty(original.prototype, 'constructor', { value: capped, writable: true, configurable: true });
    (realm as unknown as Record<string, unknown>)[name] = capped;
  };
  capConstructor('Array', 1);
  capConstructor('ArrayBuffer', 1);
  capConstructor('SharedArrayBuffer', 1);
  for (const name of TYPED_ARRAYS) {
    const perElement = (realm as unknown as Record<string, { BYTES_PER_ELEMENT?: number } | undefined>)[name]?.BYTES_PER_ELEMENT ?? 8;
    capConstructor(name, perElement);
  }
}
