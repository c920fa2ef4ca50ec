/**
 * What an agent reads to write code against the tools: a TypeScript declaration of `tools`, each
 * tool under its id and its camelCase alias, its input and output types generated from the JSON
 * Schemas of the same zod schemas the validator enforces (@cloudflare/codemode's generator; the
 * inputs with their field docs, the outputs without), and
 * the envelope every call returns (`GET /code/types`). And what code mode's MCP server gives a
 * model: the index of tools in `execute`'s description, and each tool's purpose and compact types
 * from `describe`.
 */
import { jsonSchemaToType } from '@cloudflare/codemode';
import type { JSONSchema7 } from 'json-schema';
import type { AnyTool } from '../core/tool.ts';
import { TOOLSETS } from '../core/toolsets.ts';
import { camelCase } from './dispatcher.ts';

/** The envelope and its parts, as every call returns them. */
const ENVELOPE = `/** What every tool call returns: check \`success\` before reading \`data\`; failures are values, never exceptions. */
type Envelope<T> =
  | { success: true; message: string; data: T; links?: { label: string; url: string }[]; meta: Meta }
  | { success: false; message: string; error: ToolError; meta: Meta };
type ToolError = {
  /** VALIDATION_ERROR, PERMISSION_DENIED, NOT_FOUND, RATE_LIMITED, BUSY, ... */
  code: string;
  message: string;
  /** An example of a valid call, or the next step. */
  hint?: string;
  /** May the same call succeed later? */
  retryable: boolean;
  details?: Record<string, unknown>;
};
type Meta = { tool: string; trace_id: string; duration_ms: number; attempts: number; queued_ms: number; truncated?: boolean; replayed?: boolean };`;

/**
 * The declarations of `tools` for code that calls `selected`: the envelope, each tool's input and
 * output types, and `declare const tools`.
 *
 * @example
 * toolDeclarations(tools.filter((tool) => tool.toolset === 'study'))
 */
export function toolDeclarations(selected: readonly AnyTool[]): string {
  const types: string[] = [];
  const members: string[] = [];
  for (const tool of selected) {
    const name = pascalCase(tool.id);
    const { input, output } = tool.jsonSchemas();
    // Inputs keep their field docs (the rules the validator enforces); outputs are names and types only,
    // which is what code reads them by: their docs would double what describe costs an agent.
    types.push(
      oneLine(jsonSchemaToType(input as JSONSchema7, `${name}Input`)),
      oneLine(withoutDocComments(jsonSchemaToType(output as JSONSchema7, `${name}Output`))),
    );
    const signature = `(input: ${name}Input): Promise<Envelope<${name}Output>>;`;
    const doc = `  /** ${tool.purpose.replace(/\*\//g, '* /')}${tool.annotations.readOnlyHint ? '' : ' (writes)'} */`;
    members.push(doc, `  ${JSON.stringify(tool.id)}${signature}`, `  ${camelCase(tool.id)}${signature}`);
  }
  return [ENVELOPE, ...types, `declare const tools: {\n${members.join('\n')}\n};`].join('\n');
}

/**
 * The index of tools that code mode's MCP server puts in `execute`'s description: the ids, a line
 * per toolset, `*` after a tool that writes. About 4 tokens a tool, so every tool is named at
 * little cost; `describe` gives the purposes and types of the tools a model picks
 * ({@link toolSignatures}).
 *
 * @example
 * // documents: add-document*, replace-document*, delete-document*, embed-tasks*
 * // task-analysis: semantic-search, get-document-context, detect-dependencies*, ...
 */
export function toolIndex(selected: readonly AnyTool[]): string {
  return TOOLSETS.map((toolset) => {
    const ids = selected.filter((tool) => tool.toolset === toolset).map((tool) => `${tool.id}${tool.annotations.readOnlyHint ? '' : '*'}`);
    return ids.length ? `${toolset}: ${ids.join(', ')}` : '';
  })
    .filter(Boolean)
    .join('\n');
}

/** What {@link toolSignatures}'s lines mean, said once above them. */
export const SIGNATURES_LEGEND =
  "Per tool: its purpose; id(input) => the fields of its data on success ([] a list, ? optional). int, bool: number, boolean; RF = {response_format?:'concise'|'detailed'}.";

/**
 * Each tool in two lines, what `describe` answers: its purpose (and whether it writes) as a
 * comment, then a call, `id(input) => data`: its input as a compact type, and the fields of its
 * success envelope's data by name (lists marked `[]`, values of an enum given), both generated
 * from the same JSON Schemas (`?` optional; bounds, formats and field docs left to the validator's
 * errors). About a quarter of the tool's declarations ({@link toolDeclarations}), and what code
 * needs: the names and shapes it sends, the names it reads.
 *
 * @example
 * // Create a flashcard, due at once; update-flashcard-review schedules its reviews. (writes)
 * // create-flashcard({front:string;back:string;topic_id?:int}) => {card_id,due}
 */
export function toolSignatures(selected: readonly AnyTool[]): string {
  return selected
    .map((tool) => {
      const { input, output } = tool.jsonSchemas();
      const call = `${tool.id}(${withSharedFormat(compactType(input as Schema, INPUT_DEPTH))}) => ${fieldNames(output as Schema)}`;
      return `// ${tool.purpose}${tool.annotations.readOnlyHint ? '' : ' (writes)'}\n${call}`;
    })
    .join('\n');
}

/** The `response_format` field most tools share, written once in the legends as the type `RF`. */
const RESPONSE_FORMAT = "response_format?:'concise'|'detailed'";

/** `type` without its `response_format` field, joined with `&RF` instead, when it has one. */
function withSharedFormat(type: string): string {
  if (!type.includes(RESPONSE_FORMAT)) return type;
  return `${type.replace(`;${RESPONSE_FORMAT}`, '').replace(`${RESPONSE_FORMAT};`, '').replace(`{${RESPONSE_FORMAT}}`, '{}')}&RF`;
}

/** How deep a compact type spells an input's objects out (deeper ones are `object`). */
const INPUT_DEPTH = 3;

/** How deep {@link fieldNames} spells an answer's objects out: lists of records of lists. */
const OUTPUT_DEPTH = 6;

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
};

/**
 * The fields of an answer's data by name, `{results:{task_id,text}[],next_cursor}`: objects and
 * lists spelled out, enums by their values, other values by name alone.
 */
function fieldNames(schema: Schema, depth = 0): string {
  const options = (schema.anyOf ?? schema.oneOf ?? [schema]).filter((option) => option.type !== 'null');
  const shape = options.find((option) => option.properties || option.items) ?? options[0] ?? {};
  const type = Array.isArray(shape.type) ? shape.type.find((one) => one !== 'null') : shape.type;
  if (type === 'array' && shape.items) {
    const item = fieldNames(shape.items, depth + 1);
    return `${item || compactType(shape.items, 0)}[]`;
  }
  if (shape.properties && depth < OUTPUT_DEPTH) {
    const required = new Set(shape.required ?? []);
    return `{${Object.entries(shape.properties)
      .map(([name, property]) => {
        const inner = fieldNames(property, depth + 1);
        return `${name}${required.has(name) ? '' : '?'}${inner ? `:${inner}` : ''}`;
      })
      .join(',')}}`;
  }
  return shape.enum || shape.const !== undefined ? compactType(shape, 0) : '';
}

/** A compact TypeScript type of a JSON Schema, objects spelled out to `maxDepth` levels; null left out (`?` says absent). */
function compactType(schema: Schema, maxDepth: number, depth = 0): string {
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants)
    return [...new Set(variants.filter((variant) => variant.type !== 'null').map((variant) => compactType(variant, maxDepth, depth)))].join(
      '|',
    );
  if (schema.const !== undefined) return literal(schema.const);
  if (schema.enum)
    return schema.enum
      .filter((value) => value !== null)
      .map(literal)
      .join('|');
  const type = Array.isArray(schema.type) ? schema.type.find((one) => one !== 'null') : schema.type;
  if (type === 'array') return `${wrapUnion(compactType(schema.items ?? {}, maxDepth, depth + 1))}[]`;
  if (type === 'object' && schema.properties && depth < maxDepth) {
    const required = new Set(schema.required ?? []);
    return `{${Object.entries(schema.properties)
      .map(([name, property]) => `${name}${required.has(name) ? '' : '?'}:${compactType(property, maxDepth, depth + 1)}`)
      .join(';')}}`;
  }
  return { integer: 'int', number: 'number', string: 'string', boolean: 'bool', null: 'null' }[type ?? ''] ?? (type ? 'object' : 'unknown');
}

/** A literal type, strings in single quotes: the index travels inside JSON, where double quotes cost an escape each. */
function literal(value: unknown): string {
  return typeof value === 'string' ? `'${value.replace(/'/g, "\\'")}'` : JSON.stringify(value);
}

/** `type` in parentheses when it is a union at its top level (`(string|int)[]`, not `({a:'x'|'y'})[]`). */
function wrapUnion(type: string): string {
  let depth = 0;
  for (const character of type) {
    if (character === '{' || character === '(') depth++;
    else if (character === '}' || character === ')') depth--;
    else if (character === '|' && depth === 0) return `(${type})`;
  }
  return type;
}

/** `declaration` on one line: the generator's indentation costs an agent tokens and says nothing the braces do not. */
function oneLine(declaration: string): string {
  return declaration.replace(/\n[ \t]*/g, ' ').trim();
}

/** `declaration` without its doc comments (the generator writes each on lines of its own). */
function withoutDocComments(declaration: string): string {
  return declaration.replace(/^[ \t]*\/\*\*[^]*?\*\/[ \t]*\n/gm, '');
}

function pascalCase(id: string): string {
  const camel = camelCase(id);
  return camel.charAt(0).toUpperCase() + camel.slice(1);
}
