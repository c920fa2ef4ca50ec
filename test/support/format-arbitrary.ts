/**
 * Date-times, dates and UUIDs for the schema generators (schema-arbitrary.ts) and the date-time
 * tests: the forms a schema's `format` accepts, and near misses of every part (out of range, written
 * differently, other versions and cases, the first and last years Postgres and JavaScript share).
 */
import fc from 'fast-check';

const two = (n: number) => String(n).padStart(2, '0');

/** Date-times as accepted: any calendar day of recent centuries, any offset Postgres stores. */
export const validDateTime: fc.Arbitrary<string> = fc
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
export const dateLike: fc.Arbitrary<string> = fc.oneof(
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
export const uuidLike: fc.Arbitrary<string> = fc.oneof(
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
