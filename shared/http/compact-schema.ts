/**
 * The schemas a model reads on every request (MCP `tools/list`).
 *
 * An input schema is the catalog's, every rule kept, less two things: `$schema`, and the
 * storable-text pattern of each text field (no NUL, no unpaired UTF-16 surrogate: beyond anything a
 * model writes, and about a fifth of the list). "Not blank" is said by the short pattern `\S`
 * instead. So a client that validates arguments against the list refuses exactly what the server
 * refuses, text Postgres cannot store excepted (a documented exception, docs/schemas.md).
 *
 * An output schema is cut to what changes how the model reads an answer: descriptions, `enum`,
 * `required`, `additionalProperties`, `propertyNames`, patterns beside a format and the storage's
 * integer range are dropped (a client checks answers against them, and the model reads the values
 * themselves); an answer's choice among bare types is a list of types.
 */
import { NON_BLANK_TEXT_PATTERN, SAFE_TEXT_PATTERN } from '../core/text.ts';

/** A JSON Schema, as zod generates it. */
export type JsonSchema = Record<string, unknown>;

/** Bounds at or past Postgres's `integer` range are the storage's, not a choice a model must know. */
const POSTGRES_INTEGER_MAX = 2_147_483_647;
const TEXT_PATTERNS: ReadonlySet<unknown> = new Set([SAFE_TEXT_PATTERN.source, NON_BLANK_TEXT_PATTERN.source]);
/** "At least one character other than whitespace", as JSON Schema's unanchored `pattern` reads it. */
export const NOT_BLANK_PATTERN = String.raw`\S`;
const OUTPUT_ONLY_DROPPED: ReadonlySet<string> = new Set([
  'description',
  'required',
  'additionalProperties',
  'propertyNames',
  'title',
  'enum',
]);
/** Keywords whose value is a schema, or a list or map of schemas, to compact in turn. */
const SUBSCHEMA_LISTS: ReadonlySet<string> = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);
const SUBSCHEMA_MAPS: ReadonlySet<string> = new Set(['properties', '$defs']);

/** `schema` (a tool's input or output JSON Schema) as a model is shown it. */
export function compactSchema(schema: JsonSchema, { output = false }: { output?: boolean } = {}): JsonSchema {
  return output ? withoutUnusedDefinitions(dropKeywords(schema)) : withoutTextPatterns(schema, true);
}

/**
 * An input schema without `$schema` and with the storable-text patterns dropped ("not blank" said as
 * `\S`); an optional field's "or null" said as a type list (`["string", "null"]`) rather than as
 * an `anyOf` around it, which says the same in fewer words.
 */
function withoutTextPatterns(node: unknown, root = false): JsonSchema {
  if (Array.isArray(node)) return node.map((item) => withoutTextPatterns(item)) as unknown as JsonSchema;
  if (!isRecord(node)) return node as JsonSchema;
  const nullable = orNull(node);
  if (nullable) return withoutTextPatterns(nullable);
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (root && key === '$schema') continue;
    if (key === 'pattern' && value === SAFE_TEXT_PATTERN.source) continue;
    if (key === 'pattern' && value === NON_BLANK_TEXT_PATTERN.source) out.pattern = NOT_BLANK_PATTERN;
    // Enum values, defaults and examples are data, not schemas: copied as they are.
    else if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples') out[key] = value;
    else out[key] = withoutTextPatterns(value);
  }
  return out;
}

function dropKeywords(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  // A value of a form of its own (a cursor) is copied, not read: its form and length say nothing.
  const copied = typeof schema.pattern === 'string' && !TEXT_PATTERNS.has(schema.pattern) && !('format' in schema);
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$schema' || OUTPUT_ONLY_DROPPED.has(key)) continue;
    if (copied && (key === 'pattern' || key === 'minLength' || key === 'maxLength')) continue;
    if (key === 'pattern' && (TEXT_PATTERNS.has(value) || 'format' in schema)) continue;
    if (key === 'not' && 'format' in schema) continue;
    if ((key === 'minimum' || key === 'maximum') && typeof value === 'number' && Math.abs(value) >= POSTGRES_INTEGER_MAX) continue;
    // `properties` and `items` say what an answer's object or array is.
    if (key === 'type' && (value === 'object' ? 'properties' in schema : value === 'array' && 'items' in schema)) continue;
    if (key === 'anyOf' && Array.isArray(value) && value.every(isBareType)) out.type = value.map((item: JsonSchema) => item.type);
    else if (SUBSCHEMA_LISTS.has(key) && Array.isArray(value)) {
      // A condition emptied by what was dropped says nothing: it goes too, never left as `{}`.
      const items = value.map((item: JsonSchema) => dropKeywords(item)).filter((item) => Object.keys(item).length > 0 || key !== 'allOf');
      if (items.length) out[key] = items;
    } else if (SUBSCHEMA_MAPS.has(key) && isRecord(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([name, item]) => [name, dropKeywords(item as JsonSchema)]));
    else if ((key === 'items' || key === 'additionalProperties' || key === 'not') && isRecord(value)) out[key] = dropKeywords(value);
    else out[key] = value;
  }
  return out;
}

/**
 * `{ anyOf: [X, { type: "null" }], ...rest }` as one schema accepting the same values: X with
 * "null" among its types (and its enum), or X's own options with null among them. Undefined when
 * `node` is not of that form, or X cannot take null that way (a `const`, no `type`).
 */
function orNull(node: JsonSchema): JsonSchema | undefined {
  const options = node.anyOf;
  if (!Array.isArray(options) || options.length !== 2 || !isNullType(options[1])) return undefined;
  const { anyOf: _options, ...rest } = node;
  const value = options[0] as JsonSchema;
  if (Array.isArray(value.anyOf) && Object.keys(value).length === 1)
    return { ...rest, anyOf: [...(value.anyOf as JsonSchema[]), { type: 'null' }] };
  // A condition that also judges null (`not`, `allOf`, ...) would judge it differently once null is among the types.
  if (typeof value.type !== 'string' || ['const', 'anyOf', 'oneOf', 'allOf', 'not', 'if'].some((keyword) => keyword in value))
    return undefined;
  const { description: inner, ...schema } = value;
  const enumValues = Array.isArray(schema.enum) ? { enum: [...schema.enum, null] } : {};
  return {
    ...(inner !== undefined && rest.description === undefined ? { description: inner } : {}),
    ...rest,
    ...schema,
    type: [schema.type, 'null'],
    ...enumValues,
  };
}

function isNullType(schema: unknown): boolean {
  return isRecord(schema) && schema.type === 'null' && Object.keys(schema).length === 1;
}

/** `{ type: "integer" }` and nothing else: options of this kind say the same as a list of types. */
function isBareType(schema: unknown): boolean {
  return isRecord(schema) && typeof schema.type === 'string' && Object.keys(schema).length === 1;
}

/** `schema` without the `$defs` nothing refers to any more (those only a free-form field used). */
export function withoutUnusedDefinitions(schema: JsonSchema): JsonSchema {
  const { $defs: definitions, ...rest } = schema;
  if (!isRecord(definitions)) return schema;
  const used = new Set<string>();
  const pending = [rest];
  while (pending.length) {
    for (const ref of referencesIn(pending.pop())) {
      const name = ref.slice('#/$defs/'.length);
      if (!used.has(name) && name in definitions) {
        used.add(name);
        pending.push(definitions[name] as JsonSchema);
      }
    }
  }
  const kept = Object.entries(definitions).filter(([name]) => used.has(name));
  return kept.length ? { $defs: Object.fromEntries(kept), ...rest } : rest;
}

function referencesIn(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(referencesIn);
  if (!isRecord(node)) return [];
  return Object.entries(node).flatMap(([key, value]) => (key === '$ref' && typeof value === 'string' ? [value] : referencesIn(value)));
}

function isRecord(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
