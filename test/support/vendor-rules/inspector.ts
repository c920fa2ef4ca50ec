/**
 * The MCP Inspector's schema portability check (`npx @modelcontextprotocol/inspector --cli --method
 * tools/list --strict`, version 2.12.0): it walks every `inputSchema` and `outputSchema` of
 * `tools/list` and reports, per subschema,
 * - an error for a bare `true` or `false` where a schema object is expected (outside the keywords whose
 *   value may be a boolean, such as `additionalProperties`);
 * - a warning for `type` given as a list (`["string", "null"]`): clients that map schemas onto a
 *   single-`type` dialect (Gemini's `parameters`, OpenAPI 3.0) refuse the tool or drop the constraint;
 * - a warning for a `$ref` pointing outside the document;
 * - a warning for a schema with no validation keyword at all (`{}`, or a description alone), which
 *   accepts any value (except directly under `not`).
 * Written from the Inspector's CLI (its `lintNode` and `walk`); `npm run bench -- tool-list` prints
 * the count on the list as served.
 */
import { isSchema } from './walk.ts';

/** One finding, as the Inspector prints it. */
export interface InspectorFinding {
  tool: string;
  severity: 'error' | 'warning';
  /** `inputSchema.properties.notes`. */
  path: string;
  rule: 'boolean-schema' | 'type-union' | 'remote-ref' | 'untyped-schema';
}

/** Keywords whose value is a schema (or a map or list of schemas) the Inspector walks into. */
const MAPS = ['properties', 'patternProperties', 'dependentSchemas', 'dependencies', '$defs', 'definitions'];
const LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SINGLES = [
  'items',
  'additionalProperties',
  'additionalItems',
  'unevaluatedProperties',
  'unevaluatedItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'contentSchema',
];
/** Where a bare boolean is a schema's ordinary spelling. */
const BOOLEAN_VALUED = new Set(['additionalProperties', 'unevaluatedProperties', 'additionalItems', 'unevaluatedItems']);
/** Keywords that constrain a value: a schema with none of them accepts anything. */
const CONSTRAINING = new Set([
  'type',
  'enum',
  'const',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'format',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxContains',
  'minContains',
  'maxProperties',
  'minProperties',
  'required',
  'dependentRequired',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'items',
  'prefixItems',
  'contains',
  'additionalItems',
  'unevaluatedItems',
  'properties',
  'patternProperties',
  'additionalProperties',
  'unevaluatedProperties',
  'propertyNames',
  'dependentSchemas',
  'dependencies',
  '$ref',
  '$dynamicRef',
  '$recursiveRef',
]);
const TYPES = new Set(['null', 'boolean', 'object', 'array', 'number', 'string', 'integer']);

/** What the Inspector's `--strict` reports for the tools of a `tools/list` result. */
export function inspectorFindings(tools: readonly { name: string; inputSchema?: unknown; outputSchema?: unknown }[]): InspectorFinding[] {
  const findings: InspectorFinding[] = [];
  for (const tool of tools) {
    for (const kind of ['inputSchema', 'outputSchema'] as const) {
      if (tool[kind] !== undefined) visit(tool[kind], kind, undefined, (finding) => findings.push({ tool: tool.name, ...finding }));
    }
  }
  return findings;
}

function visit(node: unknown, path: string, keyword: string | undefined, report: (finding: Omit<InspectorFinding, 'tool'>) => void): void {
  if (typeof node === 'boolean') {
    if (keyword === undefined || !BOOLEAN_VALUED.has(keyword)) report({ severity: 'error', path, rule: 'boolean-schema' });
    return;
  }
  if (!isSchema(node)) return;
  const type = node.type;
  if (Array.isArray(type) && type.length > 0 && type.every((one) => TYPES.has(one as string)) && new Set(type).size === type.length)
    report({ severity: 'warning', path, rule: 'type-union' });
  if (typeof node.$ref === 'string' && node.$ref !== '' && !node.$ref.startsWith('#'))
    report({ severity: 'warning', path, rule: 'remote-ref' });
  const constrains = Object.keys(node).some((key) => CONSTRAINING.has(key)) || ('if' in node && ('then' in node || 'else' in node));
  if (!constrains && keyword !== 'not') report({ severity: 'warning', path, rule: 'untyped-schema' });
  for (const key of MAPS) {
    if (isSchema(node[key])) for (const [name, child] of Object.entries(node[key])) visit(child, `${path}.${key}.${name}`, key, report);
  }
  for (const key of LISTS) {
    const list = node[key];
    if (Array.isArray(list)) list.forEach((child, index) => visit(child, `${path}.${key}[${index}]`, key, report));
  }
  for (const key of SINGLES) {
    if (!(key in node)) continue;
    const value = node[key];
    if (key === 'items' && Array.isArray(value)) value.forEach((child, index) => visit(child, `${path}.items[${index}]`, key, report));
    else visit(value, `${path}.${key}`, key, report);
  }
}
