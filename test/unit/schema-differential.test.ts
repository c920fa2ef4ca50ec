/**
 * What is advertised is what is enforced: for every registered tool (and a table tool using every
 * rule a table configuration can ask for), inputs generated from its advertised input JSON Schema,
 * and mutations of them, are judged by a standard validator (Ajv, JSON Schema draft 2020-12, formats
 * asserted) reading the advertised schema plus the rules between fields the tool's description
 * states, and by the tool's own validator (validateInput). They must agree on every input.
 *
 * Limits that depend on the data are outside any schema and outside this test: `chunk_number`
 * past the last chunk of the documents asked for (get-document-context answers VALIDATION_ERROR
 * once it has read them), a well-formed `cursor` the tool did not make (its form is checked
 * here; what it holds only the tool can tell), and ids that do not exist (NOT_FOUND).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import { tableTool } from '../../functions/table-tools/lib/table-tool.ts';
import { INT4 } from '../../shared/core/fields.ts';
import type { AnyTool } from '../../shared/core/tool.ts';
import { validateInput } from '../../shared/core/validation.ts';
import { numericBoundaries } from '../support/numeric-boundaries.ts';
import { inputArbitrary } from '../support/schema-arbitrary.ts';

/** Cases per tool: generated inputs and mutations of them (fixed seeds: the same cases every run). */
const CASES = 2_000;

// ajv-formats is CommonJS; its default export is the plugin itself.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020;
const ajv = addFormats(new Ajv2020({ strict: true, allErrors: false }));

/** A table tool with every data type and every option a table configuration offers. */
const everyRule = tableTool({
  toolId: 'every-rule',
  displayName: 'Every rule',
  recordName: 'row',
  description: 'Exercises every input rule of table tools.',
  tableName: 'every_rule',
  fields: [
    { name: 'required_text', label: 'Required text', dataType: 'text', required: true, maxLength: 12, example: 'hello' },
    { name: 'long_text', label: 'Long text', dataType: 'text', minLength: 3 },
    { name: 'empty_allowed', label: 'Empty allowed', dataType: 'text', required: true, minLength: 0, maxLength: 4, example: '' },
    { name: 'count', label: 'Count', dataType: 'integer', required: true, example: 3 },
    { name: 'bounded', label: 'Bounded', dataType: 'integer', min: -5, max: 5, default: 0 },
    { name: 'price', label: 'Price', dataType: 'numeric', precision: 4, scale: 2 },
    { name: 'ratio', label: 'Ratio', dataType: 'numeric', min: 0, max: 1 },
    { name: 'flag', label: 'Flag', dataType: 'boolean' },
    { name: 'kind', label: 'Kind', dataType: 'enum', enumValues: ['a', 'b c', 'Ü'], default: 'a' },
    { name: 'at', label: 'At', dataType: 'datetime', required: true, minDate: '1999-12-31', maxDate: '2100-02-28', example: '2025-10-05T14:30:00Z' },
    { name: 'whenever', label: 'Whenever', dataType: 'datetime' },
    { name: 'payload', label: 'Payload', dataType: 'json' },
  ],
});

/** JSON Schema, over an object, of "`field` is given": present and not null (null means absent). */
function given(field: string, schema: Record<string, unknown> = { not: { type: 'null' } }): Record<string, unknown> {
  return { type: 'object', required: [field], properties: { [field]: schema } };
}
const neither = (first: string, second: string) => ({ not: { allOf: [given(first), given(second)] } });
const exactlyOne = (first: string, second: string) => ({ oneOf: [given(first), given(second)] });

/**
 * The rules between fields that the tools enforce and their descriptions say, written here from
 * the descriptions: model APIs refuse them at a schema's root, so the advertised schemas leave
 * them out, and the judge adds them.
 */
const RULES_BETWEEN_FIELDS: Record<string, Record<string, unknown>[]> = {
  'list-plan-items': [neither('plan_id', 'plan_title')],
  'add-plan-item': [exactlyOne('plan_id', 'plan_title')],
  'update-item-status': [exactlyOne('item_id', 'item_title'), neither('plan_id', 'plan_title')],
  'update-plan-status': [exactlyOne('plan_id', 'plan_title')],
  'get-wrong-questions': [exactlyOne('topic_id', 'topic_name')],
  'quiz-post-save': [{ anyOf: [given('wrong_answers', { type: 'array', minItems: 1 }), given('correct_retries', { type: 'array', minItems: 1 })] }],
  'update-flashcard-review': [{ oneOf: [given('grade'), { anyOf: [given('ease_factor'), given('next_review_at')] }] }],
};

describe.each([...tools, everyRule].map((tool) => [tool.id, tool] as const))('%s: advertised schema vs validator', (_id, tool: AnyTool) => {
  const advertised = tool.jsonSchemas().input;
  const rules = RULES_BETWEEN_FIELDS[tool.id];
  const schema = rules ? { ...advertised, allOf: rules } : advertised;

  it('has a schema Ajv compiles in strict mode', () => {
    expect(() => ajv.compile(schema)).not.toThrow();
  });

  it(`agrees with Ajv on ${CASES} generated and mutated inputs`, () => {
    const judge = ajv.compile(schema);
    const inputs = fc.sample(inputArbitrary(schema), { seed: 2026, numRuns: CASES });
    const disagreements: string[] = [];
    let accepted = 0;
    for (const input of inputs) {
      const standard = judge(input);
      const ours = validateInput(tool.input, input, tool.hint);
      if (ours.ok) accepted++;
      if (standard !== ours.ok) {
        const why = ours.ok ? ajv.errorsText(judge.errors) : ours.error.message;
        disagreements.push(`${standard ? 'Ajv accepts' : 'Ajv refuses'}, the tool ${ours.ok ? 'accepts' : 'refuses'} (${why.slice(0, 300)}): ${JSON.stringify(input).slice(0, 300)}`);
      }
    }
    expect(disagreements.slice(0, 5)).toEqual([]);
    // Enough of both kinds for the agreement to mean something (tools that need one of two
    // optional fields accept fewer of the generated inputs).
    expect(accepted).toBeGreaterThan(CASES * 0.05);
    expect(CASES - accepted).toBeGreaterThan(CASES * 0.3);
  });
});

/**
 * The boundaries of every numeric field, read from each tool's advertised schema (never a list of
 * fields): each is bounded on both sides (integers within Postgres `integer`, what every id and
 * count column holds), Ajv and validateInput agree at 0, 1, each bound and one past it, 2^31 and
 * 2^53 − 1, and a refusal names the field and its bound.
 */
describe.each([...tools, everyRule].map((tool) => [tool.id, tool] as const))('%s: numeric boundaries', (_id, tool: AnyTool) => {
  const schema = tool.jsonSchemas().input;
  const cases = numericBoundaries(schema, tool.example as Record<string, unknown>)
    // Only fields the example can carry (a field named with another, such as plan_id next to plan_title, cannot).
    .filter((c) => c.minimum === undefined || validateInput(tool.input, { ...c.input, [c.field]: Array.isArray(c.input[c.field]) ? [c.minimum] : c.minimum }, tool.hint).ok);

  it('bounds every numeric field on both sides, integers within Postgres integer', () => {
    for (const c of numericBoundaries(schema, {})) {
      expect(c.minimum, c.field).toEqual(expect.any(Number));
      expect(c.maximum, c.field).toEqual(expect.any(Number));
      if (Number.isInteger(c.maximum)) expect(c.maximum!, c.field).toBeLessThanOrEqual(INT4.max);
    }
  });

  it.skipIf(cases.length === 0)('agrees with Ajv at every boundary, and names the field and its bound when it refuses', () => {
    const judge = ajv.compile(schema);
    for (const c of cases) {
      const context = `${c.field} = ${c.value}`;
      const ours = validateInput(tool.input, c.input, tool.hint);
      expect(ours.ok, context).toBe(c.inRange);
      expect(judge(c.input), context).toBe(c.inRange);
      if (!ours.ok) {
        expect(ours.error.code, context).toBe('VALIDATION_ERROR');
        const named = ours.error.details?.fields?.find((f) => f.field === c.field || f.field.startsWith(`${c.field}[`));
        expect(named, `${context}: ${ours.error.message}`).toBeDefined();
        const bound = c.value > (c.maximum ?? Infinity) ? c.maximum : c.minimum;
        expect(named!.message, context).toContain(String(bound));
      }
    }
  });
});
