/**
 * OpenAI's rules for a function tool (Chat Completions `tools[].function`, Responses `tools[]`),
 * and, when it says `strict: true`, the subset of JSON Schema that Structured Outputs supports.
 */
import { nodes, typesOf, type Schema } from './walk.ts';

// https://platform.openai.com/docs/api-reference/chat/create (tools[].function.name): "Must be a-z,
// A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64."
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

// https://platform.openai.com/docs/guides/structured-outputs#supported-schemas: "Supported types:
// String, Number, Boolean, Integer, Object, Array, Enum, anyOf" (and null, for optional fields).
const STRICT_TYPES = new Set(['string', 'number', 'boolean', 'integer', 'object', 'array', 'null']);
// Same page, "Supported properties": strings `pattern`, `format`; numbers `multipleOf`, `maximum`,
// `exclusiveMaximum`, `minimum`, `exclusiveMinimum`; arrays `minItems`, `maxItems`; and the keywords
// that build a schema (`type`, `properties`, `required`, `additionalProperties`, `items`, `enum`,
// `const`, `anyOf`, `$ref`/`$defs` "Definitions are supported", `description`).
const STRICT_KEYWORDS = new Set([
  'type',
  'description',
  'title',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  '$ref',
  '$defs',
  'pattern',
  'format',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'minItems',
  'maxItems',
]);
// Same page, `format`: "date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid".
const STRICT_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
// Same page, "Objects have limitations on nesting depth and size": "up to 5000 object properties
// total, with up to 10 levels of nesting", and "up to 1000 enum values across all enum properties".
const MAX_PROPERTIES = 5000;
const MAX_NESTING = 10;
const MAX_ENUM_VALUES = 1000;
// Same page: "the total string length of all property names, definition names, enum values, and
// const values cannot exceed 120,000 characters".
const MAX_STRING_LENGTH = 120_000;

/** A function definition, as the export serves it. */
export interface OpenAiFunction {
  name: string;
  description?: string;
  parameters: Schema;
  strict?: boolean;
}

/** The rules `definition` breaks, as messages; empty when it passes. */
export function openAiFunction(definition: OpenAiFunction): string[] {
  const broken: string[] = [];
  const { name, parameters, strict } = definition;
  if (!NAME.test(name)) broken.push(`name '${name}' does not match ${NAME.source}`);
  // https://platform.openai.com/docs/guides/function-calling: "parameters" is "JSON schema defining
  // the function's input arguments", an object; Structured Outputs: "the root level object must be an
  // object, and not use anyOf".
  if (parameters.type !== 'object') broken.push(`parameters.type is ${JSON.stringify(parameters.type)}, not "object"`);
  if ('anyOf' in parameters) broken.push('parameters uses anyOf at the root');
  if (strict === true) broken.push(...strictRules(parameters));
  return broken;
}

function strictRules(root: Schema): string[] {
  const broken: string[] = [];
  let properties = 0;
  let enumValues = 0;
  let stringLength = 0;
  for (const { schema, path, depth } of nodes(root)) {
    for (const keyword of Object.keys(schema))
      if (!STRICT_KEYWORDS.has(keyword)) broken.push(`${path}: '${keyword}' is not supported in strict mode`);
    for (const type of typesOf(schema)) if (!STRICT_TYPES.has(type)) broken.push(`${path}: type '${type}' is not supported`);
    if (typeof schema.format === 'string' && !STRICT_FORMATS.has(schema.format))
      broken.push(`${path}: format '${schema.format}' is not supported`);
    if (!('type' in schema || 'anyOf' in schema || '$ref' in schema || 'enum' in schema || 'const' in schema))
      broken.push(`${path}: says no type`);
    if (Array.isArray(schema.enum)) {
      enumValues += schema.enum.length;
      stringLength += schema.enum.reduce<number>((sum, value) => sum + String(value).length, 0);
    }
    if ('const' in schema) stringLength += String(schema.const).length;
    if (typeof schema.$defs === 'object' && schema.$defs !== null) stringLength += Object.keys(schema.$defs).join('').length;
    const isObject = typesOf(schema).includes('object') || 'properties' in schema;
    if (!isObject) continue;
    if (depth > MAX_NESTING) broken.push(`${path}: objects nested ${depth} deep (at most ${MAX_NESTING})`);
    // Same page, "additionalProperties: false must always be set in objects".
    if (schema.additionalProperties !== false) broken.push(`${path}: an object without additionalProperties: false`);
    // Same page, "All fields must be required": every property listed in `required`.
    const names = Object.keys((schema.properties as Schema | undefined) ?? {});
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    for (const field of names) if (!required.has(field)) broken.push(`${path}: property '${field}' is not in required`);
    properties += names.length;
    stringLength += names.join('').length;
  }
  if (properties > MAX_PROPERTIES) broken.push(`${properties} object properties in all (at most ${MAX_PROPERTIES})`);
  if (enumValues > MAX_ENUM_VALUES) broken.push(`${enumValues} enum values in all (at most ${MAX_ENUM_VALUES})`);
  if (stringLength > MAX_STRING_LENGTH) broken.push(`${stringLength} characters of names and values (at most ${MAX_STRING_LENGTH})`);
  return broken;
}
