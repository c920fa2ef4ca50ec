/**
 * What is advertised is what is enforced: for every registered tool (and a table tool using every
 * rule a table configuration can ask for), inputs drawn from its advertised input JSON Schema are
 * judged by a standard validator (Ajv, JSON Schema draft 2020-12, formats asserted) reading that
 * schema alone, and by the tool's own validator (validateInput). They must agree on every input.
 * The inputs come from two generators that know nothing of the tools:
 *
 * - json-schema-faker, the JSON Schema community's sample generator, reading the schema as any
 *   schema-driven client would (what a form builder or a test generator sends), and mutations of
 *   its samples (any JSON value, unsafe text or deep nesting put at a random path);
 * - test/support/schema-arbitrary.ts (fast-check), which aims at every bound the schema states.
 *
 * Both read the schema as served in the catalog (`GET /tools`) and as MCP's `tools/list` compacts it.
 * The only disagreements allowed are the documented exceptions of docs/schemas.md that no schema a
 * model API takes can state: inside a free-form JSON field, its nesting depth and the text and keys
 * nested below its first level (a schema could say them only with `$ref`: {@link insideJsonField}),
 * and whether its JSON text parses to an object; where MCP gives such a field as its JSON text
 * alone, the object itself, which the server takes too ({@link asJsonText}); and a tool that needs
 * one of two fields naming the same thing (seed clients' `item_id` or `item_title`) refusing an
 * input with neither (it would need `anyOf` at the root: {@link ONE_OF}).
 * Limits that depend on the data are outside
 * any schema and outside this test: `chunk_number` past the last chunk of the documents asked for,
 * a well-formed `cursor` the tool did not make, and ids that do not exist (NOT_FOUND).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import { generateSync } from 'json-schema-faker';
import { describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import { INT4, ONE_OF_REQUIRED } from '../../shared/core/fields.ts';
import type { AnyTool } from '../../shared/core/tool.ts';
import { validateInput } from '../../shared/core/validation.ts';
import { compactSchema } from '../../shared/http/compact-schema.ts';
import { everyRule } from '../support/every-rule-tool.ts';
import { numericBoundaries } from '../support/numeric-boundaries.ts';
import { mutated } from '../support/hostile-arbitrary.ts';
import { inputArbitrary } from '../support/schema-arbitrary.ts';

/** Cases per tool and schema from fast-check (fixed seeds: the same cases every run). */
const CASES = 2_000;
/**
 * Samples per tool and schema from json-schema-faker (seeds 1 to SAMPLES), and as many mutations of
 * them. Its texts are kept to 200 characters (a megabyte-long document per sample makes the run
 * slow and judges no other rule); the fast-check generator goes to every length bound.
 */
const SAMPLES = 150;

// ajv-formats is CommonJS; its default export is the plugin itself.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020;
// Union types (`type: ["string", "null"]`) are plain JSON Schema; strict mode flags them only as a style.
const ajv = addFormats(new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: false }));

/**
 * The surfaces' schemas of a tool, and the refusals each may leave unsaid besides what is inside a
 * free-form JSON field: the catalog's says everything; MCP's leaves out the storable-text pattern
 * (text Postgres cannot store, refused with `unsafe_text` or `unsafe_key`).
 */
const SURFACES = {
  catalog: { schemaOf: (tool: AnyTool) => tool.jsonSchemas().input, unsaid: new Set<string>(), cases: CASES },
  mcp: {
    schemaOf: (tool: AnyTool) => compactSchema(tool.jsonSchemas().input),
    unsaid: new Set(['unsafe_text', 'unsafe_key']),
    cases: CASES / 4,
  },
};

/** `schema` with every text ceiling above 200 lowered to 200 (or its minimum): for generating samples quickly, all still valid. */
function shortTexts(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(shortTexts);
  if (typeof node !== 'object' || node === null) return node;
  const copy = Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, key === 'enum' || key === 'const' ? value : shortTexts(value)]),
  ) as Record<string, any>;
  if (typeof copy.maxLength === 'number' && copy.maxLength > 200) copy.maxLength = Math.max(200, copy.minLength ?? 0);
  return copy;
}

/**
 * The top-level fields whose advertised schema is free-form JSON (said in words: "nested at most N
 * levels"): an object of any keys, or its JSON text (a string of `contentMediaType: "application/json"`).
 */
function jsonFields(schema: Record<string, any>): Set<string> {
  const found = new Set<string>();
  const optionsOf = (node: Record<string, any>): Record<string, any>[] => [node, ...(node.anyOf ?? []).flatMap(optionsOf)];
  for (const [name, field] of Object.entries<Record<string, any>>(schema.properties ?? {})) {
    if (
      optionsOf(field).some(
        (option) =>
          ([option.type].flat().includes('object') || option.contentMediaType === 'application/json') &&
          /nested at most \d+ levels/.test(`${field.description ?? ''} ${option.description ?? ''}`),
      )
    )
      found.add(name);
  }
  return found;
}

/**
 * `input` with the object of each free-form JSON field written as its JSON text: what a client that
 * reads a schema giving such a field as its text alone (MCP's) sends for the object the server
 * takes as well.
 */
function asJsonText(input: unknown, json: ReadonlySet<string>): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return input;
  return Object.fromEntries(
    Object.entries(input).map(([name, value]) => [
      name,
      json.has(name) && typeof value === 'object' && value !== null && !Array.isArray(value) ? JSON.stringify(value) : value,
    ]),
  );
}

/**
 * Whether the tool's refusal is only about what lies inside a free-form JSON field (its depth, or
 * text and keys below its first level): the documented exception a schema cannot say without `$ref`.
 */
function insideJsonField(fields: readonly { field: string }[] | undefined, json: ReadonlySet<string>): boolean {
  return !!fields?.length && fields.every(({ field }) => json.has(field.split(/[.[]/)[0]!));
}

/**
 * The rules between fields docs/schemas.md documents, by tool: one of these fields must be given.
 * Written out here, from the documentation, not read from the tools.
 */
const ONE_OF: Readonly<Record<string, readonly string[]>> = { 'update-item-status': ['item_id', 'item_title'] };

/** Whether the tool's refusal is only the documented rule between fields: none of its fields was given. */
function noneOfOneOf(toolId: string, fields: readonly { code: string; field: string }[] | undefined, input: unknown): boolean {
  const names = ONE_OF[toolId];
  if (!names || !fields?.length || typeof input !== 'object' || input === null) return false;
  const given = names.some((name) => (input as Record<string, unknown>)[name] != null);
  return !given && fields.every(({ code, field }) => code === ONE_OF_REQUIRED && field === names[0]);
}

/** Whether every problem of the tool's refusal is of a kind the surface leaves unsaid. */
function unsaidThere(fields: readonly { code: string }[] | undefined, unsaid: ReadonlySet<string>): boolean {
  return !!fields?.length && fields.every(({ code }) => unsaid.has(code));
}

describe.each([...tools, everyRule].map((tool) => [tool.id, tool] as const))('%s: advertised schema vs validator', (_id, tool: AnyTool) => {
  describe.each(Object.entries(SURFACES))('as %s serves it', (_surface, { schemaOf, unsaid, cases }) => {
    const schema = schemaOf(tool);
    const json = jsonFields(schema);

    it('has a schema Ajv compiles in strict mode, with no $ref, $defs or combinator at the root', () => {
      expect(() => ajv.compile(schema)).not.toThrow();
      expect(JSON.stringify(schema)).not.toMatch(/"\$(ref|defs)"/);
      for (const keyword of ['allOf', 'anyOf', 'oneOf', 'not', 'if']) expect(schema, keyword).not.toHaveProperty(keyword);
    });

    it(
      `agrees with Ajv on ${SAMPLES} json-schema-faker samples, as many mutations of them, and ${cases} generated inputs`,
      { timeout: 900_000 },
      () => {
        const judge = ajv.compile(schema);
        const samples = Array.from(
          { length: SAMPLES },
          (_, i) =>
            JSON.parse(JSON.stringify(generateSync(shortTexts(schema) as never, { seed: i + 1, optionalsProbability: 0.5 }))) as unknown,
        );
        const mutations = fc
          .sample(mutated(fc.constantFrom(...samples)), { seed: 2026, numRuns: SAMPLES })
          .map((value) => JSON.parse(JSON.stringify(value)) as unknown);
        const generated = fc.sample(inputArbitrary(schema), { seed: 2026, numRuns: cases });
        const disagreements: string[] = [];
        let accepted = 0;
        let excepted = 0;
        for (const [kind, input] of [
          ...samples.map((input) => ['sample', input] as const),
          ...mutations.map((input) => ['mutation', input] as const),
          ...generated.map((input) => ['generated', input] as const),
        ]) {
          const standard = judge(input);
          const ours = validateInput(tool.input, input, tool.hint);
          if (ours.ok) accepted++;
          if (kind === 'sample')
            expect(standard, `json-schema-faker's sample is valid under the schema: ${JSON.stringify(input).slice(0, 300)}`).toBe(true);
          if (standard === ours.ok) continue;
          const fields = ours.ok ? undefined : ours.error.details?.fields;
          if (standard && (insideJsonField(fields, json) || unsaidThere(fields, unsaid) || noneOfOneOf(tool.id, fields, input))) {
            excepted++;
            continue;
          }
          // The object itself, where the schema says its JSON text: taken as the text written out would be.
          if (!standard && ours.ok && json.size > 0 && judge(asJsonText(input, json))) {
            excepted++;
            continue;
          }
          const why = ours.ok ? ajv.errorsText(judge.errors) : ours.error.message;
          disagreements.push(
            `${kind}: ${standard ? 'Ajv accepts' : 'Ajv refuses'}, the tool ${ours.ok ? 'accepts' : 'refuses'} (${why.slice(0, 300)}): ${JSON.stringify(input).slice(0, 300)}`,
          );
        }
        expect(disagreements.slice(0, 5)).toEqual([]);
        // Only a tool with a free-form JSON field or a documented rule between fields has exceptions in the catalog.
        if (json.size === 0 && unsaid.size === 0 && !ONE_OF[tool.id]) expect(excepted).toBe(0);
        // Enough of both kinds for the agreement to mean something.
        expect(accepted).toBeGreaterThan((cases + 2 * SAMPLES) * 0.1);
        expect(cases + 2 * SAMPLES - accepted).toBeGreaterThan((cases + 2 * SAMPLES) * 0.2);
      },
    );
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
    // Only fields the example can carry.
    .filter(
      (c) =>
        c.minimum === undefined ||
        validateInput(tool.input, { ...c.input, [c.field]: Array.isArray(c.input[c.field]) ? [c.minimum] : c.minimum }, tool.hint).ok,
    );

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
