/**
 * Ranges of calendar dates as regular expressions: what lets a JSON Schema `pattern` state a date
 * bound ("on or after 1900-01-01") exactly, in few characters. Dates written YYYY-MM-DD have a fixed
 * width, so text order is date order, and a range is a few prefixes: 1900-01-01 to 8999-12-31 is
 * `(?:19|[2-8])`, 1000-01-01 to 9999-12-31 is `[1-9]`.
 */

/** The least and greatest text of a calendar date, position by position. */
const LOWEST = '0000-01-01';
const HIGHEST = '9999-12-31';

/** `head` followed by a digit from `low` to `high`, then anything. */
interface Alternative {
  head: string;
  low: number;
  high: number;
}

/** "Any text": a suffix that every date of its prefix satisfies. */
const ANY = null;

/**
 * Whether the least (greatest) suffix from position `at` is the least (greatest) a date can have
 * there whatever came before: true at the start of the year's digits, the month and the day, never
 * on the second digit of a month or a day (day `x1` is the least only when x is 0; `x0` exists too).
 */
function boundary(at: number): boolean {
  return at !== 6 && at !== 9;
}

/**
 * A regular expression (source, unanchored) that matches the start of a date YYYY-MM-DD (or of a
 * date-time) exactly when its date is from `from` to `to`, both inclusive. Both must be dates of the
 * same form, `from` <= `to`.
 *
 * @example
 * sortsBetween('1900-01-01', '8999-12-31') // '(?:19|[2-8])'
 */
export function sortsBetween(from: string, to: string): string {
  const alternatives = merged(between(from, to));
  const written = alternatives.map(({ head, low, high }) => head + (low === high ? String(low) : `[${low}-${high}]`));
  return written.length === 1 ? written[0]! : `(?:${written.join('|')})`;
}

function between(from: string, to: string): Alternative[] {
  if (from === to) return [{ head: from.slice(0, -1), low: Number(from.at(-1)), high: Number(from.at(-1)) }];
  let at = 0;
  while (from[at] === to[at]) at++;
  const head = from.slice(0, at);
  const [low, high] = [Number(from[at]), Number(to[at])];
  return [
    ...after(head, low, atLeast(from, at + 1)),
    ...(high - low > 1 ? [{ head, low: low + 1, high: high - 1 }] : []),
    ...after(head, high, atMost(to, at + 1)),
  ];
}

/** The texts `head` + `digit` + each of `rest` (or + anything). */
function after(head: string, digit: number, rest: Alternative[] | typeof ANY): Alternative[] {
  return rest === ANY ? [{ head, low: digit, high: digit }] : rest.map((one) => ({ ...one, head: `${head}${digit}${one.head}` }));
}

/** The suffixes of dates from position `at` on that sort at or after `date`'s. */
function atLeast(date: string, at: number): Alternative[] | typeof ANY {
  if (boundary(at) && date.slice(at) === LOWEST.slice(at)) return ANY;
  const character = date[at]!;
  const rest = atLeast(date, at + 1);
  if (character === '-') return rest === ANY ? ANY : rest.map((one) => ({ ...one, head: `-${one.head}` }));
  const digit = Number(character);
  return [...after('', digit, rest), ...(digit < 9 ? [{ head: '', low: digit + 1, high: 9 }] : [])];
}

/** The suffixes of dates from position `at` on that sort at or before `date`'s. */
function atMost(date: string, at: number): Alternative[] | typeof ANY {
  if (boundary(at) && date.slice(at) === HIGHEST.slice(at)) return ANY;
  const character = date[at]!;
  const rest = atMost(date, at + 1);
  if (character === '-') return rest === ANY ? ANY : rest.map((one) => ({ ...one, head: `-${one.head}` }));
  const digit = Number(character);
  return [...(digit > 0 ? [{ head: '', low: 0, high: digit - 1 }] : []), ...after('', digit, rest)];
}

/** `alternatives` with those of one head and adjacent digits joined (`[2-7]` and `8`: `[2-8]`). */
function merged(alternatives: Alternative[]): Alternative[] {
  const out: Alternative[] = [];
  for (const one of alternatives) {
    const joined = out.find((other) => other.head === one.head && (other.high + 1 === one.low || one.high + 1 === other.low));
    if (joined) {
      joined.low = Math.min(joined.low, one.low);
      joined.high = Math.max(joined.high, one.high);
    } else out.push({ ...one });
  }
  return out;
}
