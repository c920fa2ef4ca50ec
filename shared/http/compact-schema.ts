/**
 * The schemas a model reads on every request (MCP `tools/list`).
 *
 * An input schema is the catalog's, every rule kept, less two things: `$schema`, and the
 * storable-text pattern of each text field (no NUL, no unpaired UTF-16 surrogate: beyond anything a
 * model writes, and about a fifth of the list). "Not blank" is said by the short pattern `\S`
 * instead. So a client that validates arguments against the list refuses exactly what the server
 * refuses, text Postgres cannot store excepted (a documented exception, docs/schemas.md).
 *
 * An optional field's "or null" stays an `anyOf` option (a choice of values is flattened into one
 * `anyOf`, an `enum` takes null among its values): never a list of types (`["string", "null"]`),
 * which clients that map schemas onto a single-`type` dialect refuse or misread (the MCP Inspector
 * warns of it).
 *
 * A free-form JSON object that may also be sent as its JSON text is said as the text alone
 * ({@link withoutOpenObjects}): the clients that hand the list to OpenAI's strict mode (OpenAI
 * Agents' strict conversion) cannot say "an object of any keys", and refuse the whole tool's
 * strictness over it. The server still takes the object itself (a documented exception).
 */
import { NON_BLANK_TEXT_PATTERN, SAFE_TEXT_PATTERN } from '../core/text.ts';

/** A JSON Schema, as zod generates it. */
export type JsonSchema = Record<string, unknown>;

/** "At least one character other than whitespace", as JSON Schema's unanchored `pattern` reads it. */
export const NOT_BLANK_PATTERN = String.raw`\S`;

/** `schema` (a tool's input JSON Schema) as a model is shown it. */
export function compactSchema(schema: JsonSchema): JsonSchema {
  return withoutTextPatterns(schema, true);
}

/**
 * An input schema without `$schema` and with the storable-text patterns dropped ("not blank" said as
 * `\S`); an optional field's "or null" said in the fewest words that stay one `type` per schema.
 */
function withoutTextPatterns(node: unknown, root = false): JsonSchema {
  if (Array.isArray(node)) return node.map((item) => withoutTextPatterns(item)) as unknown as JsonSchema;
  if (!isRecord(node)) return node as JsonSchema;
  const nullable = orNull(node);
  if (nullable) return withoutTextPatterns(nullable);
  const out: JsonSchema = {};
  // An enum or a constant says every value it takes: its `type` says nothing more.
  const listed = 'enum' in node || 'const' in node;
  for (const [key, value] of Object.entries(node)) {
    if ((root && key === '$schema') || (listed && key === 'type')) continue;
    if (key === 'pattern' && value === SAFE_TEXT_PATTERN.source) continue;
    if (key === 'pattern' && value === NON_BLANK_TEXT_PATTERN.source) out.pattern = NOT_BLANK_PATTERN;
    // Enum values, defaults and examples are data, not schemas: copied as they are.
    else if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples') out[key] = value;
    // Any value, said as `true` rather than as a schema with no keyword (which the Inspector flags as constraining nothing).
    else if (key === 'additionalProperties' && isRecord(value) && Object.keys(value).length === 0) out[key] = true;
    // The field's description says what each of its forms is for.
    else if (key === 'anyOf' && Array.isArray(value) && 'description' in node)
      out.anyOf = withoutOpenObjects(value).map((option) => withoutTextPatterns(withoutDescription(option)));
    else if (key === 'anyOf' && Array.isArray(value)) out.anyOf = withoutOpenObjects(value).map((option) => withoutTextPatterns(option));
    else out[key] = withoutTextPatterns(value);
  }
  return out;
}

function withoutDescription(node: unknown): unknown {
  if (!isRecord(node)) return node;
  const { description: _description, ...rest } = node;
  return rest;
}

/**
 * `{ anyOf: [X, { type: "null" }], ...rest }` in fewer words, accepting the same values: a choice
 * (`X` an `anyOf` alone) as one flat `anyOf` with null among its options; values of an `enum` as that
 * enum with null among them. Undefined when `node` is not of that form, or `X` is of neither kind.
 */
function orNull(node: JsonSchema): JsonSchema | undefined {
  const options = node.anyOf;
  if (!Array.isArray(options) || options.length !== 2 || !isNullType(options[1])) return undefined;
  const { anyOf: _options, ...rest } = node;
  const value = options[0] as JsonSchema;
  // A choice whose own description the field's says for it (a builder's words, repeated by the field's).
  const { description: said, ...choice } = value;
  if (Array.isArray(choice.anyOf) && Object.keys(choice).length === 1 && (said === undefined || rest.description !== undefined))
    return { ...rest, anyOf: [...(choice.anyOf as JsonSchema[]), { type: 'null' }] };
  // An enum says every value it takes, so its `type` says nothing more.
  const { description: inner, type: _type, ...values } = value;
  if (!Array.isArray(values.enum) || Object.keys(values).length !== 1) return undefined;
  return {
    ...(inner !== undefined && rest.description === undefined ? { description: inner } : {}),
    ...rest,
    enum: [...(values.enum as unknown[]), null],
  };
}

function isNullType(schema: unknown): boolean {
  return isRecord(schema) && schema.type === 'null' && Object.keys(schema).length === 1;
}

/** The media type that marks a string option as the JSON text of a free-form object (shared/core/json-fields.ts). */
const JSON_TEXT = 'application/json';

/**
 * The options of an `anyOf`, less any object of any keys when another option is its JSON text
 * (`type: "string"`, `contentMediaType: "application/json"`): what the schemas that cannot say such
 * an object (OpenAI's strict mode, Gemini's Schema, MCP clients that convert to them) are given.
 */
export function withoutOpenObjects(options: readonly unknown[]): unknown[] {
  if (!options.some((option) => isRecord(option) && option.type === 'string' && option.contentMediaType === JSON_TEXT)) return [...options];
  return options.filter(
    (option) => !(isRecord(option) && option.type === 'object' && !option.properties && option.additionalProperties !== false),
  );
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
