/**
 * What the vendor judges share: a walk over every subschema of a JSON Schema, with its path, and
 * the list of broken rules they answer (empty when the schema passes).
 */

/** A JSON Schema node. */
export type Schema = Record<string, unknown>;

/** A subschema and where it is (`properties.items.anyOf[1]`). */
export interface Node {
  schema: Schema;
  path: string;
  /** How many objects deep it is (the root object is 1). */
  depth: number;
}

const MAPS = ['properties', '$defs', 'definitions', 'patternProperties', 'dependentSchemas'];
const LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const SINGLES = [
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
];

/** Every subschema of `root`, the root first. */
export function nodes(root: Schema): Node[] {
  const found: Node[] = [];
  const visit = (schema: unknown, path: string, depth: number) => {
    if (!isSchema(schema)) return;
    const own = schema.type === 'object' || 'properties' in schema ? depth + 1 : depth;
    found.push({ schema, path: path || '(root)', depth: own });
    for (const key of MAPS) {
      if (isSchema(schema[key])) for (const [name, child] of Object.entries(schema[key])) visit(child, `${path}.${key}.${name}`, own);
    }
    for (const key of LISTS) {
      if (Array.isArray(schema[key])) schema[key].forEach((child, index) => visit(child, `${path}.${key}[${index}]`, own));
    }
    for (const key of SINGLES) visit(schema[key], `${path}.${key}`, own);
  };
  visit(root, '', 0);
  return found;
}

export function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The types a node allows (`type` as a string or a list). */
export function typesOf(schema: Schema): string[] {
  return typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? (schema.type as string[]) : [];
}

/**
 * What every host needs of a served schema, whatever its vendor: no `$ref` or `$defs` (hosts that
 * pass a schema on unresolved break, Gemini's `parameters` refuses them), and no subschema left
 * empty in a list of conditions or options (`allOf: [{}]`, which says nothing and trips converters).
 */
export function portable(root: Schema): string[] {
  const broken: string[] = [];
  for (const { schema, path } of nodes(root)) {
    for (const keyword of ['$ref', '$defs', 'definitions']) if (keyword in schema) broken.push(`${path}: '${keyword}'`);
    for (const keyword of ['allOf', 'anyOf', 'oneOf']) {
      const list = schema[keyword];
      if (Array.isArray(list) && list.some((item) => isSchema(item) && Object.keys(item).length === 0))
        broken.push(`${path}: an empty schema in ${keyword}`);
      if (Array.isArray(list) && list.length === 0) broken.push(`${path}: ${keyword} is empty`);
    }
  }
  return broken;
}
