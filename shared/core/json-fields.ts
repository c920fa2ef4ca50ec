/**
 * Free-form JSON fields, built like the other fields (./fields.ts): each rule enforced by the
 * validator and advertised in the input JSON Schema, the depth said in words.
 *
 * - {@link jsonValue}: any JSON value of storable text, nested to a bounded depth;
 * - {@link jsonObject}: a JSON object (a table tool's `json` column), given as the object itself or
 *   as its JSON text. The text form exists for the schemas that cannot say "an object of any keys":
 *   OpenAI's strict mode, Gemini's Schema and the clients that convert to them take a string
 *   (`contentMediaType: "application/json"`) where the catalog says both forms
 *   (shared/http/compact-schema.ts, `withoutOpenObjects`). Both forms obey the same rules.
 *
 * A depth is said in words: JSON Schema can bound it only with one `$defs` entry per level, which
 * model APIs refuse (Gemini's `parameters`) or read as recursion (Anthropic's strict tool use). It
 * is among the documented exceptions (docs/schemas.md).
 */
import * as z from 'zod';
import { DEFAULT_BODY_LIMIT_BYTES } from './body.ts';
import { duplicateKeys } from './duplicate-keys.ts';
import { text } from './fields.ts';
import { refuseValue, type FieldProblem } from './issues.ts';
import { kindOf, SAFE_TEXT_PATTERN } from './text.ts';
import { FORBIDDEN_KEYS, findUnsafeValue } from './validation.ts';

/** The defaults of {@link jsonValue} and {@link jsonObject}. */
export const JSON_VALUE_DEFAULTS = { maxDepth: 8 } as const;

/**
 * The most characters the JSON text of a {@link jsonObject} has: what a request body holds, which
 * bounds the object itself too.
 */
const JSON_TEXT_MAX_LENGTH = DEFAULT_BODY_LIMIT_BYTES;

/** Object keys in free-form JSON: storable text, and never a key that reaches a prototype. */
const jsonKey = z.string().meta({ pattern: SAFE_TEXT_PATTERN.source, not: { enum: [...FORBIDDEN_KEYS] } });

/**
 * Any JSON value (string, number, boolean, null, array, object) whose arrays and objects nest at
 * most `maxDepth` levels (a scalar is depth 0, `{"a": {"b": 1}}` depth 2). Strings and keys are
 * storable text, as everywhere (the screen of validateInput enforces it). Advertised as any value,
 * the depth said in its description.
 */
export function jsonValue({ maxDepth = JSON_VALUE_DEFAULTS.maxDepth }: { maxDepth?: number } = {}): z.ZodType<unknown> {
  return z
    .unknown()
    .check((payload) => {
      const depth = depthOf(payload.value);
      if (depth > maxDepth)
        refuseValue(payload, {
          code: 'too_deep',
          expected: `a JSON value nested at most ${maxDepth} levels deep`,
          received: `one that nests ${depth}`,
        });
    })
    .meta({ description: depthSentence(maxDepth) });
}

/**
 * A JSON object, the table tools' `json` data type ("must be a valid JSON object"): any JSON as its
 * values, nesting at most `maxDepth` levels in all (the object itself is one). Arrays, strings and
 * numbers are refused at the top. Given as the object, or as its JSON text (at most
 * {@link JSON_TEXT_MAX_LENGTH} characters), which is parsed and held to the same rules (depth,
 * storable text and keys, no prototype key, no key named twice, finite numbers): the tool receives the object either way.
 *
 * @example
 * jsonObject() // takes {"headache": {"severity": 3}} and '{"headache": {"severity": 3}}' alike
 */
export function jsonObject({ maxDepth = JSON_VALUE_DEFAULTS.maxDepth }: { maxDepth?: number } = {}): z.ZodType<
  Record<string, unknown>,
  Record<string, unknown> | string
> {
  const tooDeep = (depth: number): FieldProblem => ({
    code: 'too_deep',
    expected: `a JSON object nested at most ${maxDepth} levels deep (the object itself is one)`,
    received: `one that nests ${depth}`,
  });
  const object = z.record(jsonKey, z.unknown()).check((payload) => {
    const depth = depthOf(payload.value);
    if (depth > maxDepth) refuseValue(payload, tooDeep(depth));
  });
  const asText = text({ max: JSON_TEXT_MAX_LENGTH })
    .transform((value, payload) => {
      const refuse = (problem: FieldProblem) => {
        refuseValue(payload, problem);
        return z.NEVER;
      };
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch (error) {
        return refuse({
          code: 'invalid_json',
          expected: 'a JSON object, or its JSON text',
          received: `text that is not JSON (${(error as Error).message})`,
        });
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        return refuse({
          code: 'invalid_json',
          expected: 'a JSON object, or its JSON text',
          received: `the JSON text of ${kindOf(parsed)}`,
        });
      // A key named twice is as ambiguous in the text as in a request body (./duplicate-keys.ts).
      const [repeated] = duplicateKeys(value);
      if (repeated)
        return refuse({
          code: 'duplicate_key',
          expected: 'JSON text that names each key of an object at most once',
          received: `text that names '${repeated.key.slice(0, 60)}' twice in one object`,
        });
      const depth = depthOf(parsed);
      if (depth > maxDepth) return refuse(tooDeep(depth));
      // What the screen of validateInput refuses in the object itself, refused in its text alike.
      const unsafe = findUnsafeValue(parsed);
      if (unsafe)
        return refuse({
          code: unsafe.code,
          expected: `JSON text whose '${unsafe.field}' is ${unsafe.expected}`,
          received: unsafe.received ?? 'something else',
        });
      return parsed as Record<string, unknown>;
    })
    .meta({ contentMediaType: 'application/json' });
  return z
    .union([object, asText], { error: 'must be a JSON object, or its JSON text' })
    .meta({ description: jsonObjectSentence(maxDepth) });
}

/** The depth rule in words, for a description (where a field's own description is appended). */
function depthSentence(maxDepth: number): string {
  return `JSON nested at most ${maxDepth} levels deep (each object or array is one).`;
}

/** A {@link jsonObject}'s rules in words, for a description: its two forms and its depth. */
export function jsonObjectSentence(maxDepth: number): string {
  return `A JSON object or its text, nested at most ${maxDepth} levels deep (each object or array is one).`;
}

/** How many levels of arrays and objects `value` nests. */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let deepest = 0;
  for (const item of Object.values(value)) deepest = Math.max(deepest, depthOf(item));
  return deepest + 1;
}
