/**
 * Forged cursors, made from a real one: its position (base64url JSON, as any caller can read it)
 * with one field at a time set to a value at or past a bound of what a database column or query
 * holds, the rest (its binding to the call's inputs included) unchanged. What the cursor holds is
 * read from the cursor itself, never from a list of the tools' fields.
 */

/** The integers at the edges of Postgres `integer` and of JavaScript's exact integers. */
export const INTEGER_EDGES = [-1, 0, 1, 2 ** 31 - 1, 2 ** 31, 2 ** 53 - 1] as const;

/** Date-times at and past the edges of what `timestamptz` stores as written. */
export const DATE_TIME_EDGES = [
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '10000-01-01T00:00:00Z',
  '2026-02-30T00:00:00Z',
] as const;

/** Strings no column stores, or that are not what an id column takes. */
const TEXT_EDGES = ['', 'not-a-uuid', 'nul \u0000 inside', 'x'.repeat(300)] as const;

/** One forged cursor: which field of the position was changed, to what, and the cursor. */
export interface Forgery {
  field: string;
  value: unknown;
  cursor: string;
  /** Whether the value lies outside Postgres `integer` (or is no date-time Postgres stores as written). */
  outOfRange: boolean;
}

const DATE_TIME = /^\d{4}-\d\d-\d\dT/;

/** The position a cursor holds (base64url of its JSON). */
export function readPosition(cursor: string): Record<string, unknown> {
  const binary = atob(cursor.replace(/-/g, '+').replace(/_/g, '/'));
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)))) as Record<string, unknown>;
}

/** A cursor holding `position`, as the tools encode one. */
export function writePosition(position: Record<string, unknown>): string {
  const bytes = new TextEncoder().encode(JSON.stringify(position));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/**
 * Every forgery of `cursor`: each number, date-time and string it holds (in nested lists too)
 * replaced by each edge value of its kind. The key `~` (the binding to the call's inputs) is kept.
 */
export function forgeries(cursor: string): Forgery[] {
  const position = readPosition(cursor);
  const found: Forgery[] = [];
  const visit = (value: unknown, path: (string | number)[]) => {
    if (Array.isArray(value)) return value.forEach((item, i) => visit(item, [...path, i]));
    if (typeof value === 'object' && value !== null) return Object.entries(value).forEach(([key, item]) => visit(item, [...path, key]));
    const edges: readonly unknown[] =
      typeof value === 'number'
        ? INTEGER_EDGES
        : typeof value === 'string' && DATE_TIME.test(value)
          ? DATE_TIME_EDGES
          : typeof value === 'string'
            ? TEXT_EDGES
            : [];
    for (const edge of edges) {
      const forged = structuredClone(position) as Record<string | number, unknown>;
      let holder = forged;
      for (const key of path.slice(0, -1)) holder = holder[key] as Record<string | number, unknown>;
      holder[path.at(-1)!] = edge;
      const outOfRange =
        typeof edge === 'number'
          ? edge < -(2 ** 31) || edge > 2 ** 31 - 1
          : DATE_TIME_EDGES.includes(edge as never) && !/^(0001|9999)-/.test(String(edge));
      found.push({ field: path.join('.'), value: edge, cursor: writePosition(forged), outOfRange });
    }
  };
  for (const [key, value] of Object.entries(position)) if (key !== '~') visit(value, [key]);
  return found;
}
