/**
 * The OpenAI export (GET /tools?format=openai) against strict mode's structural rules, checked
 * independently of the converter by test/support/vendor-rules/openai.ts (OpenAI's documented
 * rules, cited there), and against the validator: what the export lets a model
 * send, the validator accepts.
 */
import { describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import { openAiExport, toStrictSchema } from '../../shared/http/openai-export.ts';
import { validateInput } from '../../shared/core/validation.ts';
import { openAiFunction } from '../support/vendor-rules/openai.ts';

type Schema = Record<string, any>;

/**
 * Does the input schema take a free-form object somewhere (which no strict schema can express),
 * with no other form of it? A free-form JSON object that may also be sent as its JSON text
 * (`contentMediaType: "application/json"`) is exported as the text.
 */
function hasFreeFormObject(node: unknown): boolean {
  if (typeof node !== 'object' || node === null) return false;
  const options: unknown[] = Array.isArray((node as Schema).anyOf) ? (node as Schema).anyOf : [];
  if (options.some((option) => (option as Schema).contentMediaType === 'application/json')) return false;
  if (typeof (node as Schema).additionalProperties === 'object') return true;
  return Object.values(node).some(hasFreeFormObject);
}

describe.each(tools.map((tool) => [tool.id, tool] as const))('%s as an OpenAI function', (id, tool) => {
  const { definition, problems } = openAiExport(tool);
  const parameters = definition.function.parameters as Schema;

  it('is named and described as the tool (the idempotency note is for the HTTP client, not the model)', () => {
    expect(definition).toMatchObject({ type: 'function', function: { name: id, description: tool.purpose } });
    expect(id).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it('follows strict mode, or says why it cannot', () => {
    const violations = openAiFunction({ name: id, parameters, strict: true });
    if (hasFreeFormObject(tool.jsonSchemas().input)) {
      expect(definition.function.strict).toBe(false);
      expect(problems.length).toBeGreaterThan(0);
      // Free-form objects are the only thing it could not convert.
      expect(violations.every((violation) => violation.endsWith('an object without additionalProperties: false'))).toBe(true);
    } else {
      expect(violations).toEqual([]);
      expect(definition.function.strict).toBe(true);
      expect(problems).toEqual([]);
    }
  });

  it('makes every optional field nullable, and the validator reads null as absent', () => {
    const input = tool.jsonSchemas().input as Schema;
    const optional = Object.keys(input.properties).filter((field) => !(input.required ?? []).includes(field));
    for (const field of optional) {
      const property = parameters.properties[field];
      const nullable = Array.isArray(property.anyOf)
        ? property.anyOf.some((option: Schema) => option.type === 'null')
        : Array.isArray(property.enum)
          ? property.enum.includes(null)
          : Array.isArray(property.type) && property.type.includes('null');
      expect(nullable, field).toBe(true);
    }
    const example = tool.example as Record<string, unknown>;
    const withNulls = { ...example, ...Object.fromEntries(optional.map((field) => [field, null])) };
    const withoutThem = Object.fromEntries(Object.entries(example).filter(([field]) => !optional.includes(field)));
    // Both may fail alike: a tool can require one of two optional fields (plan_id or plan_title).
    expect(validateInput(tool.input, withNulls, tool.hint)).toEqual(validateInput(tool.input, withoutThem, tool.hint));
    for (const field of optional) {
      const { [field]: _, ...without } = example;
      const fromNull = validateInput(tool.input, { ...example, [field]: null }, tool.hint);
      expect(fromNull, field).toEqual(validateInput(tool.input, without, tool.hint));
      if (!(field in example)) expect(fromNull, field).toMatchObject({ ok: true });
    }
  });
});

describe('the export', () => {
  it('makes every tool strict: no free-form object is left without its JSON text', () => {
    expect(tools.filter((tool) => !openAiExport(tool).definition.function.strict).map((tool) => tool.id)).toEqual([]);
  });
});

describe('toStrictSchema', () => {
  const { schema, problems } = toStrictSchema({
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 2, maxLength: 50, description: 'Who.' },
      when: { type: 'string', format: 'date-time', pattern: '^\\d{4}-.*$' },
      site: { type: 'string', format: 'uri' },
      limit: { type: 'integer', minimum: 1, maximum: 9007199254740991, default: 20, description: 'How many.' },
      tags: {
        type: 'array',
        maxItems: 3,
        uniqueItems: true,
        items: { type: 'object', properties: { key: { type: 'string' }, note: { type: 'string' } }, required: ['key'] },
      },
      extra: { type: 'object', additionalProperties: { type: 'string' } },
    },
    required: ['name', 'when', 'site', 'tags'],
    additionalProperties: false,
  });

  it('requires every field and makes optional ones nullable, saying what null means', () => {
    expect(schema.required).toEqual(['name', 'when', 'site', 'limit', 'tags', 'extra']);
    expect(schema.properties).toMatchObject({
      limit: { description: 'How many. Null means 20.', type: ['integer', 'null'], minimum: 1 },
    });
  });

  it('keeps supported keywords, drops the others and states the dropped constraints in words', () => {
    const properties = schema.properties as Record<string, Schema>;
    expect(properties.name).toEqual({ description: 'Who. 2 to 50 characters.', type: 'string' });
    expect(properties.when).toEqual({ type: 'string', format: 'date-time' });
    expect(properties.site).toEqual({ description: 'Format: uri.', type: 'string' });
    expect(properties.limit).not.toHaveProperty('maximum');
    expect(properties.tags).toEqual({
      description: 'No repeats.',
      type: 'array',
      maxItems: 3,
      items: {
        type: 'object',
        properties: { key: { type: 'string' }, note: { type: ['string', 'null'] } },
        required: ['key', 'note'],
        additionalProperties: false,
      },
    });
  });

  it('names the fields strict mode cannot express, and shows a free-form object as an object of any keys', () => {
    expect(problems).toEqual(["'extra' allows objects with any keys"]);
    expect((schema.properties as Record<string, Schema>).extra).toEqual({ type: ['object', 'null'] });
  });

  it('leaves out the definitions only a free-form field used, and keeps those other fields use', () => {
    const value = { anyOf: [{ type: 'string' }, { type: 'array', items: { $ref: '#/$defs/value' } }] };
    const converted = toStrictSchema({
      type: 'object',
      $defs: { value, tag: { type: 'string', enum: ['a', 'b'] } },
      properties: { data: { type: 'object', additionalProperties: { $ref: '#/$defs/value' } }, tag: { $ref: '#/$defs/tag' } },
      required: ['data', 'tag'],
    }).schema;
    // An enum says its values: its type goes.
    expect(converted.$defs).toEqual({ tag: { enum: ['a', 'b'] } });
    expect((converted.properties as Record<string, Schema>).data).toEqual({ type: 'object' });
  });

  it('gives a free-form object that may be sent as its JSON text as the text alone, and stays strict', () => {
    const converted = toStrictSchema({
      type: 'object',
      properties: {
        data: {
          description: 'Data, as an object or its text.',
          anyOf: [
            {
              anyOf: [
                { type: 'object', additionalProperties: {} },
                { type: 'string', contentMediaType: 'application/json', maxLength: 5000 },
              ],
            },
            { type: 'null' },
          ],
        },
      },
    });
    expect(converted.problems).toEqual([]);
    expect((converted.schema.properties as Record<string, Schema>).data).toEqual({
      description: 'Data, as an object or its text.',
      type: ['string', 'null'],
    });
  });

  it('says a description once, and says what a cursor-like value is not', () => {
    const converted = toStrictSchema({
      type: 'object',
      properties: {
        feedback: {
          anyOf: [{ type: 'string', description: 'Feedback: what was right or wrong.' }, { type: 'null' }],
          description: 'Feedback.',
        },
        cursor: { type: 'string', minLength: 1, maxLength: 1000, pattern: '^[A-Za-z0-9_-]+$', description: 'next_cursor.' },
      },
      required: ['cursor'],
    }).schema.properties as Record<string, Schema>;
    // The field's description speaks for its forms.
    expect(converted.feedback).toEqual({ description: 'Feedback.', type: ['string', 'null'] });
    expect(converted.cursor).toEqual({ description: 'next_cursor.', type: 'string' });
  });
});
