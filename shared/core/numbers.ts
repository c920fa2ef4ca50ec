/**
 * The one rounding rule of the figures an answer shows: durations in milliseconds, latencies and
 * confidences are rounded to two decimals (6.1234 ms reads 6.12), so that answers stay short and
 * a figure never claims a precision the clock does not have.
 */

/**
 * `value` rounded to the nearest hundredth, halves away from zero for positive values
 * (`Math.round`).
 *
 * @example
 * roundToHundredths(6.1251) // 6.13
 * roundToHundredths(0.004)  // 0
 */
export function roundToHundredths(value: number): number {
  return Math.round(value * 100) / 100;
}
