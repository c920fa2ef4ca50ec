/**
 * The tools as OpenAI function-calling definitions in strict mode (`GET /tools?format=openai`),
 * converted from the same input JSON Schemas the catalog advertises:
 *
 * - every object lists all its properties in `required` and has `additionalProperties: false`;
 * - an optional field becomes nullable (`type: [<type>, "null"]`, or a `null` option): strict mode makes
 *   the model send every field, and the validator reads `null` for an optional field as absent,
 *   so its default applies (shared/core/validation.ts);
 * - only keywords strict mode supports are kept (OpenAI's "Supported schemas": types, `enum`,
 *   `const`, `anyOf`, `$ref`/`$defs`, `pattern`, `format` among date-time, time, date, duration,
 *   email, hostname, ipv4, ipv6, uuid, numeric bounds, `minItems`/`maxItems`). What is dropped and
 *   still matters (`default`, `minLength`/`maxLength`, `uniqueItems`, non-blank text, other
 *   formats) is stated in the description, and the validator still enforces it with an error the
 *   model can act on. The storable-text pattern of every text field is left out.
 *
 * A free-form JSON object that may also be sent as its JSON text is exported as the text
 * (`withoutOpenObjects`, shared/http/compact-schema.ts), which strict mode says. A schema strict
 * mode cannot express at all (a free-form object with no text form, a value of any type) is
 * exported with `strict: false`, and the catalog's message names the field.
 */
import { ok, type Success } from '../core/contract.ts';
import { NON_BLANK_TEXT_PATTERN, SAFE_TEXT_PATTERN } from '../core/text.ts';
import { plural } from '../core/plural.ts';
import { withoutOpenObjects, withoutUnusedDefinitions, type JsonSchema } from './compact-schema.ts';

/** Text ceilings from here on are not said in the export's descriptions. */
const LONG_TEXT = 200;
import { IDEMPOTENCY_NOTE_FOR_ALL, type AnyTool } from '../core/tool.ts';

/** One tool, in the Chat Completions `tools` format (for the Responses API, spread `function`). */
export interface OpenAiFunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema; strict: boolean };
}

/** A tool's definition, and why it is not strict when it is not. */
export interface OpenAiExport {
  definition: OpenAiFunctionTool;
  /** What strict mode cannot express, by field; empty when `strict` is true. */
  problems: string[];
}

/** Copied as they are (`description`, `properties`, `items`, `anyOf`, `$defs`, `$ref` are rebuilt). */
const KEPT_KEYWORDS: ReadonlySet<string> = new Set([
  'type',
  'enum',
  'const',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
]);

/** Bounds at or past Postgres's `integer` range are the storage's. */
const POSTGRES_INTEGER_MAX = 2_147_483_647;

const TEXT_PATTERNS: ReadonlySet<unknown> = new Set([SAFE_TEXT_PATTERN.source, NON_BLANK_TEXT_PATTERN.source]);

const STRICT_FORMATS: ReadonlySet<string> = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);

const cache = new WeakMap<AnyTool, OpenAiExport>();

/** The OpenAI function definition of `tool`, converted once. */
export function openAiExport(tool: AnyTool): OpenAiExport {
  let converted = cache.get(tool);
  if (!converted) {
    const { schema, problems } = toStrictSchema(tool.jsonSchemas().input);
    converted = {
      definition: {
        type: 'function',
        function: { name: tool.id, description: tool.purpose, parameters: schema, strict: problems.length === 0 },
      },
      problems,
    };
    cache.set(tool, converted);
  }
  return converted;
}

/** The catalog in OpenAI's format: `data.tools` is ready to pass as `tools` to Chat Completions. */
export function openAiCatalog(tools: readonly AnyTool[]): Success<{ tools: OpenAiFunctionTool[] }> {
  const converted = tools.map(openAiExport);
  const loose = converted.filter((entry) => entry.problems.length > 0);
  const exceptions = loose.map((entry) => `${entry.definition.function.name} (${entry.problems.join('; ')})`).join(', ');
  return ok(
    { tools: converted.map((entry) => entry.definition) },
    `${plural(tools.length, 'tool')} as OpenAI function definitions in strict mode${loose.length ? `, except ${exceptions}, which strict mode cannot express` : ''}. Send null for an optional field to leave it out. ${IDEMPOTENCY_NOTE_FOR_ALL}`,
  );
}

interface Conversion {
  problems: string[];
  /** `$defs` entries strict mode cannot express, by `$ref`, with the reason. */
  looseDefinitions: Map<string, string>;
}

/** Converts an object JSON Schema (a tool's input) to strict mode, listing what it cannot express. */
export function toStrictSchema(schema: JsonSchema): { schema: JsonSchema; problems: string[] } {
  const conversion: Conversion = { problems: [], looseDefinitions: new Map() };
  return { schema: withoutUnusedDefinitions(convert(schema, '', conversion)), problems: conversion.problems };
}

function convert(node: JsonSchema, path: string, conversion: Conversion): JsonSchema {
  const out: JsonSchema = {};
  const notes: string[] = [];
  let freeForm = false;
  // Definitions first, so that references to loose ones are known when fields use them.
  if (isRecord(node.$defs)) {
    const definitions: Record<string, JsonSchema> = {};
    for (const [name, definition] of Object.entries(node.$defs)) {
      const inner: Conversion = { problems: [], looseDefinitions: conversion.looseDefinitions };
      definitions[name] = convert(definition as JsonSchema, '', inner);
      if (inner.problems[0]) conversion.looseDefinitions.set(`#/$defs/${name}`, inner.problems[0]);
    }
    out.$defs = definitions;
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && isRecord(value)) {
      const required = new Set(Array.isArray(node.required) ? node.required : []);
      const properties: Record<string, JsonSchema> = {};
      for (const [name, property] of Object.entries(value as Record<string, JsonSchema>)) {
        const field = convert(property, path ? `${path}.${name}` : name, conversion);
        properties[name] = required.has(name) ? field : nullable(field, property.default);
      }
      out.properties = properties;
    } else if (key === 'items' && isRecord(value)) {
      out.items = convert(value, `${path}[]`, conversion);
    } else if (key === 'anyOf' && Array.isArray(value)) {
      // The field's description says what each of its forms is for.
      const portable = withoutOpenObjects(value) as JsonSchema[];
      const options = typeof node.description === 'string' ? portable.map(({ description: _said, ...option }) => option) : portable;
      out.anyOf = options.map((option: JsonSchema) => convert(option, path, conversion));
    } else if (key === 'additionalProperties' && value !== false) {
      // A free-form object: said as `type: "object"` alone, which a non-strict definition reads as any keys.
      report(conversion, path, 'allows objects with any keys');
      freeForm = true;
    } else if (key === '$ref' && typeof value === 'string') {
      out.$ref = value;
      const reason = conversion.looseDefinitions.get(value);
      if (reason) report(conversion, path, reason);
    } else if (key === 'format' && typeof value === 'string' && !STRICT_FORMATS.has(value)) {
      notes.push(`Format: ${value}.`);
    } else if (key === 'pattern' && typeof node.format === 'string' && STRICT_FORMATS.has(node.format)) {
      // The format says it, in a form strict mode documents; regex dialects vary.
    } else if (key === 'pattern' && !TEXT_PATTERNS.has(value) && !('format' in node)) {
      // A value of a form of its own (a cursor) is copied from an answer, not written: its form and length say nothing.
    } else if (key === 'pattern' && TEXT_PATTERNS.has(value)) {
      // Storable text (no NUL, no unpaired surrogate) is beyond anything a model writes, and the
      // surrogate ranges it names are refused by some constrained-decoding regex engines.
    } else if (key === 'uniqueItems' && value === true) {
      notes.push('No repeats.');
    } else if ((key === 'minimum' || key === 'maximum') && typeof value === 'number' && Math.abs(value) >= POSTGRES_INTEGER_MAX) {
      // The storage's range (or zod's safe-integer range), not a bound anyone chose.
    } else if (key === 'minItems' && value === 0) {
      // Says nothing.
    } else if (key === 'type' && ('enum' in node || 'const' in node)) {
      // An enum or a constant says every value it takes: its type says nothing more.
    } else if (KEPT_KEYWORDS.has(key)) {
      out[key] = value;
    }
  }
  const formed = typeof node.pattern === 'string' && !TEXT_PATTERNS.has(node.pattern);
  const length = formed ? undefined : describeLength(node.minLength, node.maxLength, node.pattern === NON_BLANK_TEXT_PATTERN.source);
  if (length) notes.push(length);
  if (freeForm) {
    delete out.properties;
  } else if (node.type === 'object' || 'properties' in node) {
    out.properties ??= {};
    out.required = Object.keys(out.properties as JsonSchema);
    out.additionalProperties ??= false;
  }
  if (!['type', 'anyOf', '$ref', 'enum', 'const'].some((keyword) => keyword in out)) report(conversion, path, 'allows any value');
  const description = sentences(node.description, ...notes);
  return description ? { description, ...out } : out;
}

/**
 * An optional field as strict mode wants it: required, and null when left out, written as a type
 * list (`["integer", "null"]`, with null among an `enum`'s values) or as one more `anyOf` option.
 */
function nullable(field: JsonSchema, fallback: unknown): JsonSchema {
  const { description, ...schema } = field;
  const said = typeof description === 'string' ? description : '';
  // What null stands for, unless the description says it already.
  const text = sentences(said, fallback === undefined || /\b(null|default)/i.test(said) ? undefined : `Null means ${shown(fallback)}.`);
  const described = (rest: JsonSchema) => (text ? { description: text, ...rest } : rest);
  if (Array.isArray(schema.anyOf)) {
    // Already nullable, or a choice: one flat list of options with null among them, or the one option made nullable.
    const options = (schema.anyOf as JsonSchema[]).flatMap((option) =>
      Array.isArray(option.anyOf) && Object.keys(option).length === 1 ? (option.anyOf as JsonSchema[]) : [option],
    );
    const values = options.filter((option) => !(option.type === 'null' && Object.keys(option).length === 1));
    if (values.length === 1) {
      const { description: inner, ...value } = values[0]!;
      const merged = sentences(text, inner);
      return nullable({ ...value, ...(merged && { description: merged }) }, undefined);
    }
    return described({ ...schema, anyOf: [...values, { type: 'null' }] });
  }
  if (Array.isArray(schema.enum)) return described({ ...schema, enum: [...schema.enum, null] });
  if (typeof schema.type === 'string' && !('const' in schema)) {
    const { description: inner, ...value } = schema;
    const merged = sentences(text, inner);
    return {
      ...(merged && { description: merged }),
      ...value,
      type: [schema.type, 'null'],
    };
  }
  return described({ anyOf: [schema, { type: 'null' }] });
}

/** A default as a description says it: a word as it is (`concise`), anything else as JSON (`""`, `[]`). */
function shown(value: unknown): string {
  return typeof value === 'string' && /^[a-z][a-z_]*$/i.test(value) ? value : JSON.stringify(value);
}

/** The texts given, each once and ending as a sentence, in one description. */
function sentences(...texts: unknown[]): string {
  const parts: string[] = [];
  for (const text of texts) {
    if (typeof text !== 'string' || !text.trim()) continue;
    const sentence = /[.!?)]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`;
    const said = sentence.slice(0, -1);
    if (parts.some((part) => part.includes(said))) continue;
    // A longer text that says an earlier one again replaces it ("Feedback." and "Feedback: what was wrong.").
    const shorter = parts.findIndex((part) => said.startsWith(part.slice(0, -1)));
    if (shorter >= 0) parts.splice(shorter, 1);
    parts.push(sentence);
  }
  return parts.join(' ');
}

function describeLength(min: unknown, max: unknown, nonBlank: boolean): string | undefined {
  // Non-blank text needs no word: a model does not send blank text, and the validator says so if it does.
  const least = typeof min === 'number' && min > (nonBlank ? 1 : 0) ? min : undefined;
  const most = typeof max === 'number' ? max : undefined;
  // A ceiling of LONG_TEXT characters or more is beyond what a model writes into one field (MCP's
  // inputSchema states it as maxLength; here it would cost every request its words).
  const ceiling = most !== undefined && most < LONG_TEXT ? most : undefined;
  if (least !== undefined && ceiling !== undefined) return `${least} to ${ceiling} characters.`;
  if (ceiling !== undefined) return `At most ${ceiling} characters.`;
  if (least === 1) return 'Not empty.';
  if (least !== undefined) return `At least ${least} characters.`;
  return undefined;
}

function report(conversion: Conversion, path: string, reason: string): void {
  conversion.problems.push(path ? `'${path}' ${reason}` : reason);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
