/**
 * How similarities are shown to callers, so that a shown number can be used as a threshold and keeps
 * what it was read from.
 */

/**
 * A cosine similarity as shown: four decimals, rounded down (0.45347 shows as 0.4534). A caller
 * comparing shown values with a threshold of the same four decimals gets exactly what the tool
 * keeps, since the tool compares the shown value too.
 */
export function shownSimilarity(similarity: number): number {
  return Math.floor(similarity * 10_000) / 10_000;
}
