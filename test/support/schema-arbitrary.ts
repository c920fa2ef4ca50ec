/**
 * Inputs generated from an advertised input JSON Schema (fast-check, driven by the schema's own
 * keywords), for the differential test and the hostile-input test:
 *
 * - values the schema describes, within its bounds (most of them valid: they show that what the
 *   schema allows is accepted);
 * - wild values near every bound the schema states (lengths in code points, numeric ranges, item
 *   counts, nesting depth), in the forms its formats describe and just outside them (date-times
 *   with every kind of wrong part, UUIDs of other versions or cases, near-miss enum values), with
 *   text Postgres cannot store (NUL, unpaired surrogates) and text that only looks empty mixed in;
 *   fields present, absent, null or unknown;
 * - mutations of the former: any JSON value, unsafe text or deep nesting put at any path.
 *
 * Every value is what a client can send: it goes through JSON.stringify and JSON.parse. The texts,
 * hostile values and mutations are in hostile-arbitrary.ts, the date-times, dates and UUIDs in
 * format-arbitrary.ts.
 */
import fc from 'fast-check';
import { dateLike, dateTimeLike, uuidLike, validDateTime } from './format-arbitrary.ts';
import { blankText, mutated, safeText, shortText } from './hostile-arbitrary.ts';

type Schema = Record<string, any>;

/** How often each kind of input is drawn, relative to the others. */
export interface InputMix {
  valid: number;
  wild: number;
  mutated: number;
}

/** Inputs for `root` (a tool's input schema): generated values, and mutations of them. */
export function inputArbitrary(root: Schema, mix: InputMix = { valid: 2, wild: 2, mutated: 2 }): fc.Arbitrary<unknown> {
  const valid = new Generator(root, 'valid').valueOf(root);
  const wild = new Generator(root, 'wild').valueOf(root);
  return fc
    .oneof(
      { weight: mix.valid, arbitrary: valid },
      { weight: mix.wild, arbitrary: wild },
      { weight: mix.mutated, arbitrary: mutated(valid) },
    )
    .map((value) => JSON.parse(JSON.stringify(value ?? null)) as unknown);
}

/** `prefix`, then `filler` repeated, to exactly `length` characters (code points); a filler emoji is one character but two UTF-16 units. */
function textOfLength(prefix: string, filler: string, length: number): string {
  const head = [...prefix].slice(0, length);
  return head.join('') + filler.repeat(length - head.length);
}

/** Integers around a bound: just below, at, just above. */
function around(...bounds: (number | undefined)[]): number[] {
  return bounds.flatMap((bound) => (bound === undefined ? [] : [bound - 1, bound, bound + 1])).filter((n) => n >= 0);
}

/** Arbitraries for the values a schema describes (`valid`) or values near and past what it states (`wild`). */
class Generator {
  private readonly references = new Map<string, fc.Arbitrary<unknown>>();
  private readonly root: Schema;
  private readonly mode: 'valid' | 'wild';

  /** `valid`: values within what the schema states; `wild`: anything near or past it. */
  constructor(root: Schema, mode: 'valid' | 'wild') {
    this.root = root;
    this.mode = mode;
  }

  valueOf(schema: Schema): fc.Arbitrary<unknown> {
    if (typeof schema.$ref === 'string') return this.reference(schema.$ref);
    if (Array.isArray(schema.anyOf)) return fc.oneof(...schema.anyOf.map((option: Schema) => this.valueOf(option)));
    if (Array.isArray(schema.enum)) return this.enumValue(schema.enum);
    if ('const' in schema) return this.enumValue([schema.const]);
    switch (schema.type) {
      case 'string':
        if (schema.format === 'date-time') return this.mode === 'valid' ? validDateTime : dateTimeLike;
        if (schema.format === 'uuid') return this.mode === 'valid' ? fc.uuid() : uuidLike;
        if (schema.format === 'date') return this.mode === 'valid' ? validDateTime.map((value) => value.slice(0, 10)) : dateLike;
        return this.text(schema);
      case 'integer':
      case 'number':
        return this.number(schema);
      case 'boolean':
        return this.mode === 'valid'
          ? fc.boolean()
          : fc.oneof({ weight: 5, arbitrary: fc.boolean() }, { weight: 1, arbitrary: fc.constantFrom('true', 0, 1) });
      case 'null':
        return fc.constant(null);
      case 'array':
        return this.array(schema);
      case 'object':
        return schema.properties ? this.object(schema) : this.record(schema);
      default:
        return fc.jsonValue({ maxDepth: 3 });
    }
  }

  private reference(ref: string): fc.Arbitrary<unknown> {
    let arbitrary = this.references.get(ref);
    if (!arbitrary) {
      const target = ref
        .replace(/^#\//, '')
        .split('/')
        .reduce((node: Schema, key) => node[key], this.root);
      arbitrary = this.valueOf(target);
      this.references.set(ref, arbitrary);
    }
    return arbitrary;
  }

  private enumValue(values: unknown[]): fc.Arbitrary<unknown> {
    if (this.mode === 'valid') return fc.constantFrom(...values);
    const strings = values.filter((value): value is string => typeof value === 'string');
    const nearMisses = strings.flatMap((value) => [value.toUpperCase(), ` ${value}`, `${value}\u0000`, value.slice(1)]);
    return fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...values) },
      { weight: 2, arbitrary: fc.constantFrom(...nearMisses, '') },
      { weight: 1, arbitrary: shortText },
    );
  }

  private text(schema: Schema): fc.Arbitrary<string> {
    const min: number = schema.minLength ?? 0;
    const max: number = schema.maxLength ?? 50;
    if (this.mode === 'valid') {
      return fc
        .tuple(fc.integer({ min: Math.max(min, 1), max: Math.min(max, Math.max(min, 1) + 20) }), safeText, fc.constantFrom('x', '😀', 'é'))
        .map(([length, prefix, filler]) => textOfLength(prefix, filler, length));
    }
    const lengths = [...new Set(around(min, max, 1))];
    const nearBounds = fc
      .tuple(fc.constantFrom(...lengths), shortText, fc.constantFrom('x', '😀', ' ', 'é'))
      .map(([length, prefix, filler]) => textOfLength(prefix, filler, length));
    // Texts of a million characters are slow to judge: fewer of them.
    return fc.oneof(
      { weight: 8, arbitrary: shortText },
      { weight: max > 100_000 ? 1 : 4, arbitrary: nearBounds },
      { weight: 2, arbitrary: blankText },
    );
  }

  private number(schema: Schema): fc.Arbitrary<unknown> {
    const integer = schema.type === 'integer';
    const low: number = schema.minimum ?? schema.exclusiveMinimum ?? -1_000;
    const high: number = schema.maximum ?? schema.exclusiveMaximum ?? 1_000;
    const span = (n: number) => Math.max(-1e15, Math.min(1e15, n));
    if (this.mode === 'valid') {
      const [from, to] = [span(low), span(high)];
      return integer
        ? fc.integer({ min: Math.ceil(from), max: Math.floor(to) })
        : fc.double({ min: from, max: to, noNaN: true, noDefaultInfinity: true });
    }
    const edges = [
      low,
      high,
      low - 1,
      high + 1,
      low - 0.5,
      high + 0.5,
      low + 1e-9,
      high - 1e-9,
      0,
      1.15,
      61.555,
      2 ** 31,
      -(2 ** 31) - 1,
      2 ** 53,
      1e300,
      -1e300,
    ];
    return fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...edges) },
      { weight: 3, arbitrary: fc.integer({ min: Math.ceil(span(low)) - 2, max: Math.floor(span(high)) + 2 }) },
      { weight: integer ? 1 : 3, arbitrary: fc.double({ min: span(low) - 2, max: span(high) + 2, noNaN: true, noDefaultInfinity: true }) },
      { weight: 1, arbitrary: fc.constantFrom('7', null, true) },
    );
  }

  private array(schema: Schema): fc.Arbitrary<unknown> {
    const item = this.valueOf(schema.items ?? {});
    if (this.mode === 'valid') {
      const minLength: number = schema.minItems ?? 0;
      const maxLength: number = Math.min(schema.maxItems ?? 6, minLength + 6);
      return schema.uniqueItems
        ? fc.uniqueArray(item, { minLength, maxLength, selector: (value) => JSON.stringify(value) })
        : fc.array(item, { minLength, maxLength });
    }
    const lengths = [...new Set(around(schema.minItems ?? 0, schema.maxItems, 1))];
    const sized = fc.constantFrom(...lengths).chain((length) => fc.array(item, { minLength: length, maxLength: length }));
    const repeating = fc.tuple(fc.array(item, { minLength: 1, maxLength: 6 }), fc.nat()).map(([items, at]) => {
      items.splice(at % (items.length + 1), 0, items[0]);
      return items;
    });
    return fc.oneof(
      { weight: 6, arbitrary: fc.array(item, { maxLength: 6 }) },
      { weight: 3, arbitrary: sized },
      { weight: 2, arbitrary: repeating },
      { weight: 1, arbitrary: shortText },
    );
  }

  private object(schema: Schema): fc.Arbitrary<unknown> {
    const required = new Set<string>(schema.required ?? []);
    const absent = Symbol('absent');
    const fields: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, property] of Object.entries(schema.properties as Record<string, Schema>)) {
      if (this.mode === 'valid') {
        const value = this.valueOf(property);
        fields[name] = required.has(name) ? value : fc.oneof(value, fc.constant(absent), fc.constant(null));
        continue;
      }
      fields[name] = required.has(name)
        ? fc.oneof({ weight: 20, arbitrary: this.valueOf(property) }, { weight: 1, arbitrary: fc.constantFrom(absent, null) })
        : fc.oneof(
            { weight: 3, arbitrary: this.valueOf(property) },
            { weight: 2, arbitrary: fc.constant(absent) },
            { weight: 1, arbitrary: fc.constant(null) },
          );
    }
    const unknown =
      this.mode === 'valid'
        ? fc.constant(null)
        : fc.option(fc.tuple(fc.constantFrom('extra', 'Title', '__proto__', 'constructor', 'a\u0000'), fc.jsonValue({ maxDepth: 1 })), {
            freq: 12,
          });
    return fc.tuple(fc.record(fields), unknown).map(([values, extra]) => {
      const object: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(values)) if (value !== absent) object[name] = value;
      if (extra) Object.defineProperty(object, extra[0], { value: extra[1], enumerable: true, writable: true, configurable: true });
      return object;
    });
  }

  /** A free-form object: keys of any text (unsafe and prototype-reaching ones included), values of its schema. */
  private record(schema: Schema): fc.Arbitrary<unknown> {
    const value = this.valueOf(typeof schema.additionalProperties === 'object' ? schema.additionalProperties : {});
    const key =
      this.mode === 'valid'
        ? safeText
        : fc.oneof(
            { weight: 10, arbitrary: shortText },
            { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype') },
          );
    return fc.array(fc.tuple(key, value), { maxLength: 4 }).map((entries) => {
      const object: Record<string, unknown> = {};
      for (const [name, item] of entries)
        Object.defineProperty(object, name, { value: item, enumerable: true, writable: true, configurable: true });
      return object;
    });
  }
}
