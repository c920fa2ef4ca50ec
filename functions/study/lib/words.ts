/** The few sentences every study tool phrases the same way. */

/**
 * What setting a status did: "Marked plan 3 "Biology" completed (it was active)." or, when it had
 * that status already, "Plan 3 "Biology" is already completed; nothing changed."
 */
export function statusSentence(name: string, status: string, previous: string): string {
  return status === previous
    ? `${name.charAt(0).toUpperCase()}${name.slice(1)} is already ${status}; nothing changed.`
    : `Marked ${name} ${status} (it was ${previous}).`;
}
