/**
 * Anthropic's rules for a custom tool of the Messages API (`tools[].name`, `tools[].input_schema`),
 * as its documentation and its API's refusals state them. A client such as Claude Code sends every
 * tool of every connected server in each request, so one tool that breaks a rule fails them all.
 */
import { nodes, type Schema } from './walk.ts';

// https://docs.claude.com/en/api/messages (tools[].name): "Must match ^[a-zA-Z0-9_-]{1,64}$" (also
// https://docs.claude.com/en/docs/agents-and-tools/tool-use/implement-tool-use, "name").
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;
// The API's refusal of other keys: "tools.N.custom.input_schema.properties: Property keys should match
// pattern '^[a-zA-Z0-9_.-]{1,64}$'" (reported in https://github.com/anthropics/claude-code/issues/79418).
const PROPERTY_KEY = /^[a-zA-Z0-9_.-]{1,64}$/;
// The API's refusal "input_schema does not support oneOf, allOf, or anyOf at the top level"
// (https://github.com/anthropics/claude-code/issues/5319); `not` and if/then/else at the root are
// held to the same rule: the root must say the object's fields plainly.
const ROOT_COMBINATORS = ['oneOf', 'allOf', 'anyOf', 'not', 'if', 'then', 'else'];

/** The rules `input_schema` of tool `name` breaks, as messages; empty when it passes. */
export function anthropicTool(name: string, inputSchema: Schema): string[] {
  const broken: string[] = [];
  if (!NAME.test(name)) broken.push(`name '${name}' does not match ${NAME.source}`);
  // https://docs.claude.com/en/docs/agents-and-tools/tool-use/implement-tool-use: input_schema is
  // "a JSON Schema object defining the expected parameters"; the API requires `type: "object"`.
  if (inputSchema.type !== 'object') broken.push(`input_schema.type is ${JSON.stringify(inputSchema.type)}, not "object"`);
  for (const keyword of ROOT_COMBINATORS) if (keyword in inputSchema) broken.push(`input_schema has ${keyword} at the top level`);
  for (const { schema, path } of nodes(inputSchema)) {
    if (typeof schema.properties !== 'object' || schema.properties === null) continue;
    for (const key of Object.keys(schema.properties))
      if (!PROPERTY_KEY.test(key)) broken.push(`${path}: property key '${key}' does not match ${PROPERTY_KEY.source}`);
  }
  return broken;
}
