/**
 * The tools as Gemini function declarations (`GET /tools?format=gemini`), converted from the same
 * input JSON Schemas the catalog advertises into `parameters`, the Schema object Gemini documents
 * (a select subset of OpenAPI 3.0's: https://ai.google.dev/api/caching#Schema):
 *
 * - fields kept as they are: `type` (one type), `description`, `enum` (text values), `properties`,
 *   `required`, `items`, `anyOf`, `minimum`/`maximum`, `minLength`/`maxLength`, `minItems`/`maxItems`,
 *   `default`, `title`, and `format` when it is `date-time`;
 * - an optional field that also accepts null says `nullable: true` (the validator reads null as
 *   absent); a constant ("latest") becomes a one-value `enum`;
 * - what the subset cannot carry (`additionalProperties`, `propertyNames`, `uniqueItems`, `pattern`,
 *   `not`, `allOf`, exclusive bounds, other formats such as `uuid` and `date`) is left out, and what
 *   matters of it is said in the field's description ("A UUID.", "No repeats.", "Greater than 0.").
 *   The storable-text pattern goes unsaid (text Postgres cannot store: nothing a model writes).
 * - a free-form JSON object that may also be sent as its JSON text is the text (`withoutOpenObjects`,
 *   shared/http/compact-schema.ts): Gemini's Schema describes an object by its properties.
 *
 * The server still enforces every rule left out, with an error the model can act on.
 */
import { ok, type Success } from '../core/contract.ts';
import { plural } from '../core/plural.ts';
import { IDEMPOTENCY_NOTE_FOR_ALL, type AnyTool } from '../core/tool.ts';
import { withoutOpenObjects, type JsonSchema } from './compact-schema.ts';

/** A function declaration, as Gemini's `tools[].functionDeclarations[]` takes it. */
export interface GeminiFunctionDeclaration {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** Schema fields copied as they are (others are rebuilt, said in words, or left out). */
const KEPT: ReadonlySet<string> = new Set([
  'type',
  'title',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'default',
]);

/** What each format Gemini does not take means, for a description. */
const FORMAT_WORDS: Readonly<Record<string, string>> = {
  uuid: 'A UUID, e.g. 3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f.',
  date: 'A calendar date, YYYY-MM-DD.',
  email: 'An email address.',
  uri: 'A URI.',
};

const cache = new WeakMap<AnyTool, GeminiFunctionDeclaration>();

/** The Gemini function declaration of `tool`, converted once. */
export function geminiDeclaration(tool: AnyTool): GeminiFunctionDeclaration {
  let declaration = cache.get(tool);
  if (!declaration) {
    declaration = { name: tool.id, description: tool.purpose, parameters: toGeminiSchema(tool.jsonSchemas().input) };
    cache.set(tool, declaration);
  }
  return declaration;
}

/** The catalog in Gemini's format: `data.tools` is ready to pass as `tools` to `generateContent`. */
export function geminiCatalog(tools: readonly AnyTool[]): Success<{ tools: { functionDeclarations: GeminiFunctionDeclaration[] }[] }> {
  return ok(
    { tools: [{ functionDeclarations: tools.map(geminiDeclaration) }] },
    `${plural(tools.length, 'tool')} as Gemini function declarations. Rules Gemini's schema cannot carry (distinct items, text forms, exclusive bounds) are said in the descriptions and enforced by the server. ${IDEMPOTENCY_NOTE_FOR_ALL}`,
  );
}

/** A JSON Schema (a tool's input, or a part of it) as a Gemini Schema object. */
export function toGeminiSchema(node: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  const notes: string[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (KEPT.has(key)) out[key] = value;
    else if (key === 'enum' && Array.isArray(value)) {
      if (value.every((item) => typeof item === 'string')) out.enum = value;
      else notes.push(`One of: ${value.map((item) => JSON.stringify(item)).join(', ')}.`);
    } else if (key === 'const') {
      if (typeof value === 'string') out.enum = [value];
      else notes.push(`Always ${JSON.stringify(value)}.`);
    } else if (key === 'properties' && isRecord(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, field]) => [name, toGeminiSchema(field as JsonSchema)]));
    } else if (key === 'required' && Array.isArray(value)) out.required = value;
    else if (key === 'items' && isRecord(value)) out.items = toGeminiSchema(value);
    else if (key === 'format' && typeof value === 'string') {
      if (value === 'date-time') out.format = value;
      else notes.push(FORMAT_WORDS[value] ?? `Format: ${value}.`);
    } else if (key === 'exclusiveMinimum' && typeof value === 'number') notes.push(`Greater than ${value}.`);
    else if (key === 'exclusiveMaximum' && typeof value === 'number') notes.push(`Less than ${value}.`);
    else if (key === 'multipleOf' && typeof value === 'number') notes.push(`A multiple of ${value}.`);
    else if (key === 'uniqueItems' && value === true) notes.push('No repeats.');
    else if (key === 'additionalProperties' && value !== false && !isRecord(node.properties)) notes.push('An object with any keys.');
    else if (key === 'propertyNames' && isRecord(value) && isRecord(value.not) && Array.isArray(value.not.enum))
      notes.push(`No key may be ${value.not.enum.join(', ')}.`);
  }
  const options = Array.isArray(node.anyOf) ? (withoutOpenObjects(node.anyOf) as JsonSchema[]) : [];
  const values = options.filter((option) => option.type !== 'null');
  if (options.length > values.length) out.nullable = true;
  if (values.length === 1) {
    // One value or null: the value's schema, nullable, with both descriptions.
    const { description, ...inner } = toGeminiSchema(values[0]!);
    Object.assign(out, inner);
    // Unless the field's own description says it already (a builder's words the field repeats).
    if (typeof description === 'string' && !String(node.description ?? '').includes(description)) notes.unshift(description);
  } else if (values.length > 1) out.anyOf = values.map(toGeminiSchema);
  if (Array.isArray(node.type)) {
    // A list of types: one type, nullable when null is among them.
    const types = node.type.filter((type) => type !== 'null');
    if (types.length < node.type.length) out.nullable = true;
    if (types.length === 1) out.type = types[0];
    else delete out.type;
  }
  const description = [node.description, ...notes].filter((text): text is string => typeof text === 'string' && text.length > 0).join(' ');
  return description ? { description, ...out } : out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
