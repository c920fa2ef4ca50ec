/**
 * What an agent reads to write code against the tools: a TypeScript declaration of `tools`, each
 * tool under its id and its camelCase alias, its input and output types generated from the JSON
 * Schemas of the same zod schemas the validator enforces (@cloudflare/codemode's generator; the
 * inputs with their field docs, the outputs without), and
 * the envelope every call returns. And the index of tools, one line each, that code mode's MCP
 * server puts in its `execute` tool's description.
 */
import { jsonSchemaToType } from '@cloudflare/codemode';
import type { JSONSchema7 } from 'json-schema';
import type { AnyTool } from '../core/tool.ts';
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
 * One line per tool, as a call: its id (`*` when it writes) and its input as a compact type (`?`
 * optional; bounds and formats left to the validator's errors). Every tool is reachable from it;
 * `describe` gives what each does and its full types, the fields of its data among them. The
 * camelCase alias and the `response_format` most tools share are said once, in
 * {@link TOOL_INDEX_LEGEND}. About 30 tokens a tool: the index of every tool costs less than two
 * tools' entries in `tools/list`.
 *
 * @example
 * // list-plans({limit?:int;cursor?:string})
 * // add-document*({title:string;content:string}&RF)
 */
export function toolIndex(selected: readonly AnyTool[]): string {
  return selected
    .map(
      (tool) =>
        `${tool.id}${tool.annotations.readOnlyHint ? '' : '*'}(${withSharedFormat(inputType(tool.jsonSchemas().input as Schema, 0))})`,
    )
    .join('\n');
}

/** The `response_format` field most tools share, written once in the legend as the type `RF`. */
const RESPONSE_FORMAT = "response_format?:'concise'|'detailed'";

/** `type` without its `response_format` field, joined with `&RF` instead, when it has one. */
function withSharedFormat(type: string): string {
  if (!type.includes(RESPONSE_FORMAT)) return type;
  return `${type.replace(`;${RESPONSE_FORMAT}`, '').replace(`${RESPONSE_FORMAT};`, '').replace(`{${RESPONSE_FORMAT}}`, '{}')}&RF`;
}

/** What the index's lines mean, for the header above them. */
export const TOOL_INDEX_LEGEND = `Tools, a line each: id(input), * when it writes; RF = {response_format?:'concise'|'detailed'}.`;

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

/** A compact TypeScript-like type of an input schema. */
function inputType(schema: Schema, depth: number): string {
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants)
    return [...new Set(variants.filter((variant) => variant.type !== 'null').map((variant) => inputType(variant, depth)))].join('|');
  if (schema.const !== undefined) return literal(schema.const);
  if (schema.enum) return schema.enum.map(literal).join('|');
  const type = Array.isArray(schema.type) ? schema.type.find((one) => one !== 'null') : schema.type;
  if (type === 'array') return `${wrapUnion(inputType(schema.items ?? {}, depth + 1))}[]`;
  if (type === 'object' && schema.properties && depth < 3) {
    const required = new Set(schema.required ?? []);
    return `{${Object.entries(schema.properties)
      .map(([name, property]) => `${name}${required.has(name) ? '' : '?'}:${inputType(property, depth + 1)}`)
      .join(';')}}`;
  }
  return { integer: 'int', number: 'number', string: 'string', boolean: 'bool' }[type ?? ''] ?? 'object';
}

/** A literal type, strings in single quotes: the index travels inside JSON, where double quotes cost an escape each. */
function literal(value: unknown): string {
  return typeof value === 'string' ? `'${value.replace(/'/g, "\\'")}'` : JSON.stringify(value);
}

function wrapUnion(type: string): string {
  return type.includes('|') ? `(${type})` : type;
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
