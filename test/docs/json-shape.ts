/**
 * Whether a real answer has the shape a doc's JSON example shows. The example is the judge, read
 * with these rules (the docs' own convention, stated in docs/README.md):
 * - `"…"` alone stands for any value; a string with `…` in it stands for any string made of its
 *   other parts in order (`"5f0c…"`: starts with 5f0c);
 * - an object has exactly the keys shown, unless it shows the key `"…"` (then others may follow);
 * - an array has exactly the items shown, unless its last item is `"…"` (then more may follow);
 * - numbers match any number (durations, ids and counts vary from run to run); strings without
 *   `…`, booleans and null match only themselves.
 */

const ELLIPSIS = '…';

/** Where an answer differs from its example: the path and what differs; empty when it matches. */
export function shapeMismatches(example: unknown, actual: unknown, path = '$'): string[] {
  if (example === ELLIPSIS) return [];
  if (typeof example === 'string') {
    if (typeof actual !== 'string')
      return [`${path}: expected a string like ${JSON.stringify(example)}, received ${JSON.stringify(actual)}`];
    return matchesPattern(example, actual) ? [] : [`${path}: expected ${JSON.stringify(example)}, received ${JSON.stringify(actual)}`];
  }
  if (typeof example === 'number')
    return typeof actual === 'number' ? [] : [`${path}: expected a number, received ${JSON.stringify(actual)}`];
  if (example === null || typeof example === 'boolean') {
    return actual === example ? [] : [`${path}: expected ${JSON.stringify(example)}, received ${JSON.stringify(actual)}`];
  }
  if (Array.isArray(example)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array, received ${JSON.stringify(actual)}`];
    const open = example.at(-1) === ELLIPSIS;
    const shown = open ? example.slice(0, -1) : example;
    if (open ? actual.length < shown.length : actual.length !== shown.length) {
      return [`${path}: expected ${open ? 'at least ' : ''}${shown.length} items, received ${actual.length}`];
    }
    return shown.flatMap((item, index) => shapeMismatches(item, actual[index], `${path}[${index}]`));
  }
  if (typeof actual !== 'object' || actual === null || Array.isArray(actual))
    return [`${path}: expected an object, received ${JSON.stringify(actual)}`];
  const shownKeys = Object.keys(example as object);
  const open = shownKeys.includes(ELLIPSIS);
  const problems: string[] = [];
  for (const key of shownKeys) {
    if (key === ELLIPSIS) continue;
    if (!(key in actual)) problems.push(`${path}.${key}: shown in the example, missing from the answer`);
    else
      problems.push(
        ...shapeMismatches((example as Record<string, unknown>)[key], (actual as Record<string, unknown>)[key], `${path}.${key}`),
      );
  }
  if (!open) {
    for (const key of Object.keys(actual))
      if (!shownKeys.includes(key)) problems.push(`${path}.${key}: in the answer, not shown in the example (add it, or "…": "…")`);
  }
  return problems;
}

/** `"ab…cd…ef"` matches a string that starts with ab, then holds cd, and ends with ef. */
function matchesPattern(pattern: string, value: string): boolean {
  if (!pattern.includes(ELLIPSIS)) return pattern === value;
  const parts = pattern.split(ELLIPSIS);
  const first = parts[0]!;
  const last = parts.at(-1)!;
  if (!value.startsWith(first) || !value.endsWith(last) || value.length < first.length + last.length) return false;
  let at = first.length;
  const end = value.length - last.length;
  for (const middle of parts.slice(1, -1)) {
    const found = value.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}
