/**
 * The boundaries of every numeric field of an input JSON Schema, read from the schema itself: for
 * each integer or number property (an item of a list of them included), an input that is the
 * tool's example with that field set to 0, 1, its minimum and maximum, one past each, 2^31 (one
 * past Postgres `integer`) and 2^53 − 1 (JavaScript's largest exact integer), with whether the
 * advertised bounds take it.
 */

type JsonSchema = Record<string, any>;

/** One input at a boundary of one field. */
export interface BoundaryCase {
  field: string;
  value: number;
  input: Record<string, unknown>;
  /** Whether the field's advertised minimum and maximum take the value. */
  inRange: boolean;
  minimum?: number;
  maximum?: number;
}

/** The integer or number schema of a property, looking through anyOf / oneOf (null, 'latest'). */
function numericOf(schema: JsonSchema | undefined): JsonSchema | undefined {
  if (!schema || typeof schema !== 'object') return undefined;
  if (schema.type === 'integer' || schema.type === 'number') return schema;
  for (const option of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) {
    const found = numericOf(option);
    if (found) return found;
  }
  return undefined;
}

/** Every boundary case of the top-level numeric properties of `schema` (and of lists of numbers), over `example`. */
export function numericBoundaries(schema: JsonSchema, example: Record<string, unknown>): BoundaryCase[] {
  const cases: BoundaryCase[] = [];
  for (const [field, property] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    const direct = numericOf(property);
    const listed = direct ? undefined : numericOf(property.items ?? property.anyOf?.find((o: JsonSchema) => o.type === 'array')?.items);
    const numeric = direct ?? listed;
    if (!numeric) continue;
    const minimum: number | undefined = numeric.minimum ?? (numeric.exclusiveMinimum === undefined ? undefined : numeric.exclusiveMinimum);
    const maximum: number | undefined = numeric.maximum ?? numeric.exclusiveMaximum;
    const values = new Set<number>([0, 1, 2 ** 31, 2 ** 53 - 1]);
    for (const bound of [minimum, maximum]) if (bound !== undefined) for (const step of [-1, 0, 1]) values.add(bound + step);
    for (const value of values) {
      const inRange =
        (numeric.type !== 'integer' || Number.isInteger(value)) &&
        (numeric.minimum === undefined || value >= numeric.minimum) &&
        (numeric.exclusiveMinimum === undefined || value > numeric.exclusiveMinimum) &&
        (numeric.maximum === undefined || value <= numeric.maximum) &&
        (numeric.exclusiveMaximum === undefined || value < numeric.exclusiveMaximum);
      cases.push({ field, value, input: { ...example, [field]: listed ? [value] : value }, inRange, minimum, maximum });
    }
  }
  return cases;
}
