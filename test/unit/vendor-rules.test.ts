/**
 * The vendor judges of test/support/vendor-rules/ refuse what each vendor refuses: each is tried on a
 * schema the vendor accepts and on schemas that break one of its rules.
 */
import { describe, expect, it } from 'vitest';
import { anthropicTool } from '../support/vendor-rules/anthropic.ts';
import { geminiDeclaration, geminiSchemaSubset } from '../support/vendor-rules/gemini.ts';
import { openAiFunction } from '../support/vendor-rules/openai.ts';
import { inspectorFindings } from '../support/vendor-rules/inspector.ts';
import { portable } from '../support/vendor-rules/walk.ts';

const plain = {
  type: 'object',
  properties: { mood: { type: 'string', enum: ['happy', 'sad'] }, energy: { type: 'integer', minimum: 1 } },
  required: ['mood'],
};
const strict = {
  type: 'object',
  properties: { mood: { type: 'string', enum: ['happy', 'sad'] }, energy: { type: ['integer', 'null'], minimum: 1 } },
  required: ['mood', 'energy'],
  additionalProperties: false,
};

describe('Anthropic', () => {
  it('accepts a plain object schema', () => expect(anthropicTool('log-mood', plain)).toEqual([]));
  it('refuses a combinator at the top level, a root that is not an object, bad names and property keys', () => {
    expect(anthropicTool('plan', { ...plain, allOf: [{ required: ['mood'] }] })).toEqual(['input_schema has allOf at the top level']);
    expect(anthropicTool('plan', { anyOf: [plain, plain] })).toHaveLength(2);
    expect(anthropicTool('list plans', plain)[0]).toContain("name 'list plans'");
    expect(anthropicTool('x'.repeat(65), plain)).toHaveLength(1);
    expect(anthropicTool('plan', { type: 'object', properties: { 'filter[id]': { type: 'string' } } })[0]).toContain("'filter[id]'");
  });
});

describe('OpenAI', () => {
  it('accepts a strict schema, and a loose one when strict is not claimed', () => {
    expect(openAiFunction({ name: 'log-mood', parameters: strict, strict: true })).toEqual([]);
    expect(openAiFunction({ name: 'log-mood', parameters: plain, strict: false })).toEqual([]);
  });
  it('holds strict schemas to Structured Outputs: every field required, no extra keys, supported keywords and formats only', () => {
    const broken = openAiFunction({ name: 'log-mood', parameters: plain, strict: true });
    expect(broken).toEqual(
      expect.arrayContaining([
        expect.stringContaining('additionalProperties: false'),
        expect.stringContaining("'energy' is not in required"),
      ]),
    );
    expect(
      openAiFunction({
        name: 'a',
        strict: true,
        parameters: {
          ...strict,
          properties: { ...strict.properties, name: { type: 'string', minLength: 1 } },
          required: [...strict.required, 'name'],
        },
      }),
    ).toEqual([".properties.name: 'minLength' is not supported in strict mode"]);
    expect(
      openAiFunction({
        name: 'a',
        strict: true,
        parameters: { ...strict, properties: { at: { type: 'string', format: 'uri' } }, required: ['at'] },
      }),
    ).toEqual([".properties.at: format 'uri' is not supported"]);
    expect(openAiFunction({ name: 'a', strict: true, parameters: { ...strict, properties: { any: {} }, required: ['any'] } })).toEqual([
      '.properties.any: says no type',
    ]);
  });
  it('refuses deep nesting, a root that is not an object, and bad names', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let level = 0; level < 11; level++)
      deep = { type: 'object', properties: { inner: deep }, required: ['inner'], additionalProperties: false };
    expect(openAiFunction({ name: 'a', parameters: deep, strict: true })).toEqual([expect.stringContaining('nested 11 deep')]);
    expect(openAiFunction({ name: 'a', parameters: { anyOf: [strict] }, strict: false })).toHaveLength(2);
    expect(openAiFunction({ name: 'log.mood', parameters: strict, strict: true })).toHaveLength(1);
  });
});

describe('Gemini', () => {
  it('accepts a declaration whose names and types it knows', () => {
    expect(geminiDeclaration('log-mood', strict)).toEqual([]);
    expect(
      geminiSchemaSubset({
        type: 'object',
        properties: { mood: { type: 'string', enum: ['happy'] }, at: { type: 'string', format: 'date-time', nullable: true } },
      }),
    ).toEqual([]);
  });
  it('refuses names that start with a digit, parameter names with dashes, unknown types and a combinator at the root', () => {
    expect(geminiDeclaration('1-tool', plain)).toHaveLength(1);
    expect(geminiDeclaration('a', { type: 'object', properties: { 'plan-id': { type: 'integer' } } })).toHaveLength(1);
    expect(geminiDeclaration('a', { type: 'object', properties: { x: { type: 'tuple' } } })).toEqual([
      ".properties.x: type 'tuple' is not a Gemini Type",
    ]);
    expect(geminiDeclaration('a', { type: 'object', oneOf: [plain] })).toHaveLength(1);
  });
  it('holds a Schema object to the OpenAPI subset: no additionalProperties, one type, its formats, string enums', () => {
    expect(geminiSchemaSubset(strict)).toEqual([
      "(root): 'additionalProperties' is not a field of Schema",
      '.properties.energy: type is a list (use one type and nullable)',
    ]);
    expect(geminiSchemaSubset({ type: 'string', format: 'uuid' })).toHaveLength(1);
    expect(geminiSchemaSubset({ type: 'integer', enum: [1, 2] })).toHaveLength(1);
    expect(
      geminiSchemaSubset({
        type: 'object',
        properties: { any: { description: 'Anything.' }, either: { anyOf: [{ type: 'integer' }, { type: 'string' }] } },
      }),
    ).toEqual(['.properties.any: says no type']);
  });
});

describe('every host', () => {
  it('accepts a schema that is plain, and refuses references, definitions and empty leftovers', () => {
    expect(portable(plain)).toEqual([]);
    expect(portable({ ...plain, $defs: { a: { type: 'string' } }, properties: { a: { $ref: '#/$defs/a' } } })).toEqual([
      "(root): '$defs'",
      ".properties.a: '$ref'",
    ]);
    expect(portable({ type: 'object', properties: { at: { type: 'string', allOf: [{}] } } })).toEqual([
      '.properties.at: an empty schema in allOf',
    ]);
  });
});

describe('MCP Inspector (--strict)', () => {
  it('finds nothing in schemas of one type per subschema', () => {
    expect(inspectorFindings([{ name: 'log-mood', inputSchema: plain, outputSchema: { type: 'object', required: ['mood'] } }])).toEqual([]);
    const nullable = {
      type: 'object',
      properties: { notes: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
      additionalProperties: false,
    };
    expect(inspectorFindings([{ name: 'log-mood', inputSchema: nullable }])).toEqual([]);
  });
  it('warns of a list of types, a schema that constrains nothing and a remote $ref; errs on a bare boolean schema', () => {
    const findings = inspectorFindings([
      {
        name: 'plan',
        inputSchema: {
          type: 'object',
          properties: {
            notes: { type: ['string', 'null'] },
            data: { description: 'Anything.' },
            other: { $ref: 'https://x.test/s' },
            never: false,
          },
          additionalProperties: false,
        },
      },
    ]);
    expect(findings.map(({ rule, severity, path }) => `${severity} ${rule} ${path}`)).toEqual([
      'warning type-union inputSchema.properties.notes',
      'warning untyped-schema inputSchema.properties.data',
      'warning remote-ref inputSchema.properties.other',
      'error boolean-schema inputSchema.properties.never',
    ]);
  });
});
