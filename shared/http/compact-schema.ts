/**
 * The schemas a model reads on every request (MCP `tools/list`), cut to what changes what it sends
 * or how it reads an answer. A compact schema never refuses what the full one accepts: it drops
 * keywords only, and the validator still enforces every rule with an error the model can act on.
 *
 * Dropped everywhere: `$schema`; the storable-text pattern of every text field (no NUL, no unpaired
 * surrogate: beyond anything a model writes); a pattern or `not` beside a `format`, which says the
 * same in a form models know (dates, date-times); integer bounds that are only the storage's range.
 * Dropped from output schemas too: descriptions, `enum`, `required`, `additionalProperties` and
 * `propertyNames`: a client checks answers against them, and the model reads the values themselves.
 * Input schemas leave out the null an optional field also accepts. A cursor's form and length are
 * dropped (it is copied from an answer), and so are a text's minimum length of 1 and ceilings of
 * LONG_TEXT characters and more; a free-form JSON field is an object, without the definitions that
 * bound its depth; an answer's choice among bare types is a list of types.
 */
import { NON_BLANK_TEXT_PATTERN, SAFE_TEXT_PATTERN } from '../core/text.ts';

/** A JSON Schema, as zod generates it. */
export type JsonSchema = Record<string, unknown>;

/** Bounds at or past Postgres's `integer` range are the storage's, not a choice a model must know. */
const POSTGRES_INTEGER_MAX = 2_147_483_647;
/** Text ceilings from here on are not shown. */
export const LONG_TEXT = 500;
const TEXT_PATTERNS: ReadonlySet<unknown> = new Set([SAFE_TEXT_PATTERN.source, NON_BLANK_TEXT_PATTERN.source]);
const OUTPUT_ONLY_DROPPED: ReadonlySet<string> = new Set(['description', 'required', 'additionalProperties', 'propertyNames', 'title', 'enum']);
/** Keywords whose value is a schema, or a list or map of schemas, to compact in turn. */
const SUBSCHEMA_LISTS: ReadonlySet<string> = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);
const SUBSCHEMA_MAPS: ReadonlySet<string> = new Set(['properties', '$defs']);

/** `schema` (a tool's input or output JSON Schema) as a model is shown it. */
export function compactSchema(schema: JsonSchema, { output = false }: { output?: boolean } = {}): JsonSchema {
  const compact = withoutUnusedDefinitions(dropKeywords(schema, output));
  return output ? compact : optionalWithoutNull(compact, new Set(Array.isArray(schema.required) ? schema.required : []));
}

function dropKeywords(schema: JsonSchema, output: boolean): JsonSchema {
  const out: JsonSchema = {};
  const copied = typeof schema.pattern === 'string' && !TEXT_PATTERNS.has(schema.pattern) && !('format' in schema);
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$schema' || (output && OUTPUT_ONLY_DROPPED.has(key))) continue;
    // A value of a form of its own (a cursor) is copied from an answer, not written: its form and length say nothing.
    if (copied && (key === 'pattern' || key === 'minLength' || key === 'maxLength')) continue;
    // Text of at least one character (a model sends no empty text), or of up to LONG_TEXT and more
    // (beyond what a model writes into one field): the validator says so if it happens.
    // A map whose values are defined elsewhere (any JSON, nested to a depth): an object is all a model needs to know.
    if (!output && key === 'additionalProperties' && isRecord(value) && '$ref' in value) continue;
    if ((key === 'minLength' && value === 1) || (key === 'maxLength' && typeof value === 'number' && value >= LONG_TEXT)) continue;
    if (key === 'pattern' && (TEXT_PATTERNS.has(value) || 'format' in schema)) continue;
    if (key === 'not' && 'format' in schema) continue;
    if ((key === 'minimum' || key === 'maximum') && typeof value === 'number' && Math.abs(value) >= POSTGRES_INTEGER_MAX) continue;
    // `properties` and `items` say what an answer's object or array is.
    if (output && key === 'type' && (value === 'object' ? 'properties' in schema : value === 'array' && 'items' in schema)) continue;
    if (output && key === 'anyOf' && Array.isArray(value) && value.every(isBareType)) out.type = value.map((item: JsonSchema) => item.type);
    else if (SUBSCHEMA_LISTS.has(key) && Array.isArray(value)) out[key] = value.map((item: JsonSchema) => compactSchema(item, { output }));
    else if (SUBSCHEMA_MAPS.has(key) && isRecord(value)) out[key] = Object.fromEntries(Object.entries(value).map(([name, item]) => [name, compactSchema(item as JsonSchema, { output })]));
    else if ((key === 'items' || key === 'additionalProperties' || key === 'not') && isRecord(value)) out[key] = compactSchema(value, { output });
    else out[key] = value;
  }
  return out;
}

/**
 * An optional field's `anyOf: [X, { type: "null" }]` shown as X: null means the same as leaving
 * the field out (shared/core/validation.ts), and a model leaves it out. X's own description gives
 * way to the field's. Fields that must be sent, null or not, keep their null.
 */
function optionalWithoutNull(schema: JsonSchema, required: ReadonlySet<string>): JsonSchema {
  if (!isRecord(schema.properties)) return schema;
  const properties: Record<string, JsonSchema> = {};
  for (const [name, field] of Object.entries(schema.properties as Record<string, JsonSchema>)) {
    const options = field.anyOf;
    if (required.has(name) || !Array.isArray(options) || options.length !== 2 || !isNullType(options[1])) {
      properties[name] = field;
      continue;
    }
    const { anyOf: _options, ...outer } = field;
    const { description: _inner, ...value } = options[0] as JsonSchema;
    properties[name] = { ...value, ...outer };
  }
  return { ...schema, properties };
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

function isNullType(schema: unknown): boolean {
  return isRecord(schema) && schema.type === 'null' && Object.keys(schema).length === 1;
}

function isRecord(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
