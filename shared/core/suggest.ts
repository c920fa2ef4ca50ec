/**
 * "Did you mean …?" for names an agent got nearly right: a tool id in snake_case or camelCase
 * (`list_plans`, `getDueFlashcards`), a missing letter (`list-plan`), a route one character off
 * (`/execution`). Names are compared after {@link looseName}, by edit distance.
 */

/** Names longer than this are never close to one: no distance is computed for them. */
const MAX_NAME_LENGTH = 200;

/** Options of {@link closestNames}. */
export interface ClosestOptions {
  /** At most this many suggestions. Default 3. */
  max?: number;
}

/**
 * A name as compared: camelCase split into words, lower case, and `_`, spaces and `.` read as `-`
 * (`getDueFlashcards`, `get_due_flashcards` and `Get-Due-Flashcards` all read `get-due-flashcards`).
 */
export function looseName(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .replace(/[_\s.]+/g, '-');
}

/**
 * The candidates closest to `wanted` (fewest edits once both are {@link looseName}), best first, and
 * only those close enough to be what was meant: at most 2 edits, or a third of the name's length
 * for longer names. Empty when none is.
 *
 * @example
 * closestNames('list_plans', ['list-plans', 'list-plan-items']) // ['list-plans']
 * closestNames('weather', ['list-plans'])                        // []
 */
export function closestNames(wanted: string, candidates: readonly string[], { max = 3 }: ClosestOptions = {}): string[] {
  const target = looseName(wanted);
  // Longer than any name: nothing is close, and the distance is not worth computing.
  if (target.length > MAX_NAME_LENGTH) return [];
  const limit = Math.max(2, Math.floor(target.length / 3));
  const scored = candidates
    .map((name) => ({ name, distance: editDistance(target, looseName(name)) }))
    .filter(({ distance }) => distance <= limit)
    .sort((a, b) => a.distance - b.distance);
  const best = scored[0]?.distance;
  // Only the nearest, and those as near: a second-best suggestion is noise next to a near-exact one.
  return scored
    .filter(({ distance }) => distance === best)
    .slice(0, max)
    .map(({ name }) => name);
}

/** " Did you mean list-plans?" for the suggestions of {@link closestNames} (a leading space, to follow a sentence), or "" for none. */
export function didYouMean(suggestions: readonly string[]): string {
  if (suggestions.length === 0) return '';
  return ` Did you mean ${suggestions.length === 1 ? suggestions[0] : `${suggestions.slice(0, -1).join(', ')} or ${suggestions.at(-1)}`}?`;
}

/** The Levenshtein distance: the fewest insertions, deletions and substitutions turning `a` into `b`. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
