/**
 * The one pluralisation rule of every message: "1 task", "0 tasks", "2 tasks".
 */

/**
 * A count with its noun, singular for exactly one.
 *
 * @example
 * plural(1, 'task')                 // '1 task'
 * plural(3, 'match', 'matches')     // '3 matches'
 */
export function plural(count: number, noun: string, pluralNoun = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : pluralNoun}`;
}
