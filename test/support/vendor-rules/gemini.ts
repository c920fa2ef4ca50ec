/**
 * Gemini's rules for a function declaration (`tools[].functionDeclarations[]`). A declaration gives
 * its parameters either as `parameters`, a Schema object (a select subset of OpenAPI 3.0's), or as
 * `parametersJsonSchema`, a JSON Schema; the two are mutually exclusive. MCP clients for Gemini pass
 * a tool's JSON Schema as `parametersJsonSchema`; {@link geminiSchemaSubset} is what `parameters`
 * accepts, for schemas meant to be sent that way.
 */
import { nodes, typesOf, type Schema } from './walk.ts';

// https://ai.google.dev/api/caching#FunctionDeclaration, `name`: "Must be a-z, A-Z, 0-9, or contain
// underscores, colons, dots, and dashes, with a maximum length of 64"; Vertex AI's reference adds
// "Must start with a letter or an underscore"
// (https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/projects.locations.cachedContents#FunctionDeclaration).
const NAME = /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/;
// Vertex AI's FunctionDeclaration, `parameters`: "Parameter names must start with a letter or an
// underscore and must only contain chars a-z, A-Z, 0-9, or underscores with a maximum length of 64."
const PARAMETER_NAME = /^[a-zA-Z_][a-zA-Z0-9_]{0,63}$/;
// https://ai.google.dev/api/caching#Type: TYPE_UNSPECIFIED, STRING, NUMBER, INTEGER, BOOLEAN, ARRAY,
// OBJECT, NULL (JSON names in either case).
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);
// https://ai.google.dev/api/caching#Schema: the fields of a Schema object.
const SCHEMA_FIELDS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);
// Same page, `format`: "for NUMBER type: float, double; for INTEGER type: int32, int64; for STRING
// type: enum, date-time".
const SCHEMA_FORMATS = new Set(['float', 'double', 'int32', 'int64', 'enum', 'date-time']);

/** The rules a declaration of `name` with `parameters` (as `parametersJsonSchema`) breaks; empty when it passes. */
export function geminiDeclaration(name: string, parameters: Schema): string[] {
  const broken: string[] = [];
  if (!NAME.test(name)) broken.push(`name '${name}' does not match ${NAME.source}`);
  // https://ai.google.dev/api/caching#FunctionDeclaration, `parametersJsonSchema`: "The schema must
  // describe an object where the properties are the parameters to the function."
  if (parameters.type !== 'object') broken.push(`parameters.type is ${JSON.stringify(parameters.type)}, not "object"`);
  for (const combinator of ['anyOf', 'oneOf', 'allOf'])
    if (combinator in parameters) broken.push(`parameters has ${combinator} at the root: the properties are the parameters`);
  for (const key of Object.keys((parameters.properties as Schema | undefined) ?? {})) {
    if (!PARAMETER_NAME.test(key)) broken.push(`parameter name '${key}' does not match ${PARAMETER_NAME.source}`);
  }
  for (const { schema, path } of nodes(parameters)) {
    for (const type of typesOf(schema)) if (!TYPES.has(type.toLowerCase())) broken.push(`${path}: type '${type}' is not a Gemini Type`);
  }
  return broken;
}

/** The rules `schema` breaks as a Schema object (`parameters`, the OpenAPI subset); empty when it passes. */
export function geminiSchemaSubset(schema: Schema): string[] {
  const broken: string[] = [];
  for (const { schema: node, path } of nodes(schema)) {
    for (const field of Object.keys(node)) if (!SCHEMA_FIELDS.has(field)) broken.push(`${path}: '${field}' is not a field of Schema`);
    // `type` is one Type; a nullable value says `nullable: true`.
    if (Array.isArray(node.type)) broken.push(`${path}: type is a list (use one type and nullable)`);
    // Same page, `type`: "Required. Data type." (a choice among `anyOf` options says it in each option).
    else if (node.type === undefined && !Array.isArray(node.anyOf)) broken.push(`${path}: says no type`);
    else if (typeof node.type === 'string' && !TYPES.has(node.type.toLowerCase()))
      broken.push(`${path}: type '${node.type}' is not a Gemini Type`);
    if (typeof node.format === 'string' && !SCHEMA_FORMATS.has(node.format))
      broken.push(`${path}: format '${node.format}' is not supported`);
    // `enum`: "Possible values of the element of Type.STRING with enum format".
    if (Array.isArray(node.enum) && node.enum.some((value) => typeof value !== 'string'))
      broken.push(`${path}: enum values must be strings`);
  }
  return broken;
}
