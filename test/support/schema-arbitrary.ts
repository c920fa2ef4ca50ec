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
 * Every value is what a client can send: it goes through JSON.stringify and JSON.parse.
 */
import fc from 'fast-check';

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

/** Text Postgres cannot store: NUL, an unpaired high or low surrogate. */
export const UNSAFE_CHARACTERS = ['\u0000', '\uD83D', '\uDE00'];
const SAFE_CHARACTERS = [
  'a',
  'Z',
  '7',
  '-',
  ' ',
  '\n',
  '\t',
  '\u00A0',
  '\u2028',
  '\uFEFF',
  'é',
  'e\u0301',
  '😀',
  '𝄞',
  '\u0001',
  '"',
  '\\',
  '{',
];
const WHITESPACE = [' ', '\n', '\t', '\r', '\u00A0', '\u2028', '\u3000', '\uFEFF'];

const character = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...SAFE_CHARACTERS) },
  { weight: 1, arbitrary: fc.constantFrom(...UNSAFE_CHARACTERS) },
);
const shortText = fc.array(character, { maxLength: 8 }).map((characters) => characters.join(''));
const safeText = fc
  .array(fc.constantFrom(...SAFE_CHARACTERS), { minLength: 1, maxLength: 8 })
  .map((characters) => `w${characters.join('')}`);
const blankText = fc.array(fc.constantFrom(...WHITESPACE), { maxLength: 4 }).map((characters) => characters.join(''));

/** `prefix`, then `filler` repeated, to exactly `length` characters (code points); a filler emoji is one character but two UTF-16 units. */
function textOfLength(prefix: string, filler: string, length: number): string {
  const head = [...prefix].slice(0, length);
  return head.join('') + filler.repeat(length - head.length);
}

/** Integers around a bound: just below, at, just above. */
function around(...bounds: (number | undefined)[]): number[] {
  return bounds.flatMap((bound) => (bound === undefined ? [] : [bound - 1, bound, bound + 1])).filter((n) => n >= 0);
}

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

const two = (n: number) => String(n).padStart(2, '0');

/** Date-times as accepted: any calendar day of recent centuries, any offset Postgres stores. */
const validDateTime: fc.Arbitrary<string> = fc
  .record({
    year: fc.integer({ min: 1990, max: 2100 }),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 28 }),
    time: fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 })),
    fraction: fc.oneof(fc.constant(''), fc.stringMatching(/^\.\d{1,9}$/)),
    zone: fc.oneof(
      fc.constant('Z'),
      fc
        .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 59 }))
        .map(([sign, h, m]) => `${sign}${two(h)}:${two(m)}`),
    ),
  })
  .map(
    ({ year, month, day, time: [h, m, s], fraction, zone }) =>
      `${year}-${two(month)}-${two(day)}T${two(h)}:${two(m)}:${two(s)}${fraction}${zone}`,
  );

/** Date-times of every form, mostly valid, each part sometimes out of range or written differently, the edges of years 0001 to 9999 included. */
export const dateTimeLike: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc
      .record({
        year: fc.oneof(
          { weight: 8, arbitrary: fc.integer({ min: 1, max: 9999 }) },
          { weight: 1, arbitrary: fc.constantFrom(0, 1899, 1900, 2000, 2024, 10_000) },
          // Each side of the accepted years' bounds (1000 and 8999 for date-times, 9999 for dates).
          { weight: 2, arbitrary: fc.constantFrom(999, 1000, 8999, 9000, 9999) },
        ),
        month: fc.oneof({ weight: 10, arbitrary: fc.integer({ min: 1, max: 12 }) }, { weight: 1, arbitrary: fc.constantFrom(0, 13) }),
        day: fc.oneof(
          { weight: 10, arbitrary: fc.integer({ min: 1, max: 28 }) },
          { weight: 2, arbitrary: fc.constantFrom(0, 29, 30, 31, 32) },
        ),
        time: fc.oneof(
          {
            weight: 10,
            arbitrary: fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 })),
          },
          { weight: 1, arbitrary: fc.tuple(fc.constantFrom(23, 24), fc.constantFrom(59, 60), fc.constantFrom(59, 60)) },
        ),
        seconds: fc.oneof({ weight: 10, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
        fraction: fc.oneof(
          { weight: 4, arbitrary: fc.constant('') },
          { weight: 2, arbitrary: fc.stringMatching(/^\.\d{1,9}$/) },
          { weight: 1, arbitrary: fc.constantFrom('.', '.1234567890') },
        ),
        separator: fc.oneof({ weight: 12, arbitrary: fc.constant('T') }, { weight: 1, arbitrary: fc.constantFrom('t', ' ') }),
        zone: fc.oneof(
          { weight: 4, arbitrary: fc.constant('Z') },
          {
            weight: 6,
            arbitrary: fc
              .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 24 }), fc.constantFrom(0, 30, 45, 59, 60))
              .map(([sign, h, m]) => `${sign}${two(h)}:${two(m)}`),
          },
          { weight: 1, arbitrary: fc.constantFrom('', 'z', '+0200', '+02', '-1559', 'UTC', '+02:00:00') },
        ),
      })
      .map(
        ({ year, month, day, time: [h, m, s], seconds, fraction, separator, zone }) =>
          `${String(year).padStart(4, '0')}-${two(month)}-${two(day)}${separator}${two(h)}:${two(m)}${seconds ? `:${two(s)}${fraction}` : ''}${zone}`,
      ),
  },
  {
    // The first and last days Postgres and JavaScript share, with offsets on either side of UTC.
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.constantFrom('0001-01-01', '9999-12-31'),
        fc.integer({ min: 0, max: 23 }),
        fc.constantFrom('Z', '+00:00', '-00:00', '+00:01', '-00:01', '+05:30', '-05:30', '+15:59', '-15:59'),
      )
      .map(([day, hour, zone]) => `${day}T${two(hour)}:30:00${zone}`),
  },
  { weight: 1, arbitrary: fc.constantFrom('2025-10-05', 'yesterday', '2025-10-05T14:30:00Z\u0000', '') },
);

/** Calendar dates of every year form, and near misses: year 0000, the first and last years, days past a month's end, other shapes. */
const dateLike: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(
        fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(0, 999, 1000, 1900, 2024, 9999)),
        fc.integer({ min: 0, max: 13 }),
        fc.integer({ min: 0, max: 32 }),
      )
      .map(([year, month, day]) => `${String(year).padStart(4, '0')}-${two(month)}-${two(day)}`),
  },
  { weight: 1, arbitrary: fc.constantFrom('2025-10-05T00:00:00Z', '05/10/2025', '2025-1-5', '+12025-10-05', '') },
);

/** UUIDs, and near misses: other versions and variants, upper case, a URN prefix, wrong shapes. */
const uuidLike: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: fc.uuid() },
  { weight: 2, arbitrary: fc.uuid().map((id) => id.toUpperCase()) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.uuid(), fc.constantFrom(14, 19), fc.constantFrom(...'0123456789abcdef'))
      .map(([id, at, digit]) => id.slice(0, at) + digit + id.slice(at + 1)),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.constantFrom('00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '', 'not-a-uuid'),
      fc.uuid().map((id) => `urn:uuid:${id}`),
      fc.uuid().map((id) => id.replaceAll('-', '')),
      fc.uuid().map((id) => `${id}\u0000`),
    ),
  },
);

/** Text that breaks storage or the validator's walk, to put anywhere. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.tuple(shortText, fc.constantFrom(...UNSAFE_CHARACTERS), shortText).map(([before, unsafe, after]) => `${before}${unsafe}${after}`),
  fc.tuple(fc.constantFrom(...UNSAFE_CHARACTERS), fc.jsonValue({ maxDepth: 1 })).map(([unsafe, value]) => ({ [`key${unsafe}`]: value })),
  fc.integer({ min: 5, max: 80 }).map((depth) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`) as unknown),
  fc.integer({ min: 5, max: 12 }).map((depth) => JSON.parse(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`) as unknown),
  fc.constantFrom(JSON.parse('{"__proto__":{"admin":true}}') as unknown, { constructor: { prototype: 1 } }, 1e308, -0, '', ' ', [], {}),
);

/** `base` with a value replaced or added at a random path: any JSON value, or a hostile one. */
export function mutated(base: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const replacement = fc.oneof({ weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) }, { weight: 2, arbitrary: hostileValue });
  return fc.tuple(base, fc.nat(), replacement, fc.boolean()).map(([value, pick, next, add]) => {
    const copy = structuredClone(value);
    const containers: (Record<string, unknown> | unknown[])[] = [];
    const walk = (node: unknown) => {
      if (typeof node !== 'object' || node === null) return;
      containers.push(node as Record<string, unknown>);
      for (const child of Object.values(node)) walk(child);
    };
    walk(copy);
    if (containers.length === 0) return next;
    const target = containers[pick % containers.length]!;
    const keys = Object.keys(target);
    const key =
      add || keys.length === 0 ? (Array.isArray(target) ? String(target.length) : `added_${pick % 7}`) : keys[pick % keys.length]!;
    Object.defineProperty(target, key, { value: next, enumerable: true, writable: true, configurable: true });
    return copy;
  });
}
