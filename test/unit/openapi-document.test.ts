/**
 * The gateway's OpenAPI document, judged by standard tools rather than by the code that writes it:
 * the whole document by an OpenAPI 3.1 validator (@readme/openapi-parser: the specification's own
 * schema, plus the rules it cannot express, such as resolvable `$ref`s and unique operationIds),
 * each tool's request body by a JSON Schema 2020-12 validator (Ajv; 2020-12 is OpenAPI 3.1's
 * default dialect) against the tool's hand-written example, and a few tools' schemas and answers
 * against values written out here by hand.
 */
import { compileErrors, dereference, validate } from '@readme/openapi-parser';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import { createOpenApiDocument } from '../../shared/http/openapi.ts';

type Document = Record<string, any>;
/** An API document as the parser takes it. */
type ApiDocument = Exclude<Parameters<typeof validate>[0], string>;

// ajv-formats is CommonJS; its default export is the plugin itself.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020;
// Not strict: OpenAPI schemas may carry keywords of their own (`example`), which JSON Schema allows.
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));

/** The document as the gateway serves it. */
const served = () => createOpenApiDocument(tools)('http://edge-tools.test') as ApiDocument;

/** The document with every `$ref` replaced by its target, by the parser (so each schema stands alone). */
let resolved: Document;
beforeAll(async () => {
  resolved = (await dereference(structuredClone(served()))) as Document;
});

const compiled = new Map<unknown, ValidateFunction>();
/** Ajv's verdict on `value` against `schema` (a schema of the dereferenced document). */
function judge(schema: unknown, value: unknown): boolean {
  let check = compiled.get(schema);
  if (!check) compiled.set(schema, (check = ajv.compile(schema as object)));
  return check(value);
}
const requestBody = (id: string) => resolved.paths[`/tools/${id}`].post.requestBody.content['application/json'].schema;
const answer = (id: string, status: number) => resolved.paths[`/tools/${id}`].post.responses[status].content['application/json'].schema;

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1, as an independent validator reads the specification', async () => {
    const result = await validate(structuredClone(served()));
    expect(result.valid ? 'valid' : compileErrors(result)).toBe('valid');
    expect(result.specification).toBe('OpenAPI');
  });

  it.each(tools.map((tool) => [tool.id, tool] as const))(
    'takes the example of %s as its request body, and no unknown field',
    (id, tool) => {
      expect(judge(requestBody(id), tool.example)).toBe(true);
      expect(judge(requestBody(id), { ...tool.example, not_a_field: 1 })).toBe(false);
    },
  );
});

describe('a few tools, against their definitions written out by hand', () => {
  it('log-mood: four required fields, the mood enum, the energy bounds', () => {
    const body = requestBody('log-mood');
    expect(body).toMatchObject({
      type: 'object',
      additionalProperties: false,
      properties: {
        mood: { enum: ['happy', 'sad', 'neutral', 'anxious'] },
        energy_level: { type: 'integer', minimum: 1, maximum: 10 },
        user_id: { type: 'string', maxLength: 100 },
      },
    });
    expect([...body.required].sort()).toEqual(['energy_level', 'mood', 'timestamp', 'user_id']);
    const valid = { user_id: 'u1', mood: 'sad', energy_level: 3, timestamp: '2025-10-05T14:30:00Z' };
    expect(judge(body, valid)).toBe(true);
    expect(judge(body, { ...valid, energy_level: 11 })).toBe(false);
    expect(judge(body, { ...valid, mood: 'excited' })).toBe(false);
    expect(judge(body, { ...valid, timestamp: 'yesterday' })).toBe(false);
    expect(judge(body, { ...valid, notes: null })).toBe(true);
    expect(judge(body, { ...valid, notes: 'x'.repeat(501) })).toBe(false);
    const { mood: _, ...withoutMood } = valid;
    expect(judge(body, withoutMood)).toBe(false);
  });

  it('semantic-search: a query, and limit 1 to 50', () => {
    const body = requestBody('semantic-search');
    expect(body.required).toEqual(['query']);
    expect(judge(body, { query: 'hire backend engineers' })).toBe(true);
    expect(judge(body, { query: 'hire', limit: 50, threshold: 0.5, document_ids: null })).toBe(true);
    expect(judge(body, { query: 'hire', limit: 51 })).toBe(false);
    expect(judge(body, { query: 'hire', threshold: 1.5 })).toBe(false);
    expect(judge(body, { query: 'hire', document_ids: ['not-a-uuid'] })).toBe(false);
    expect(judge(body, { limit: 5 })).toBe(false);
  });

  it('semantic-search: the success envelope, as the contract describes it', () => {
    const meta = {
      tool: 'semantic-search',
      trace_id: '0b6e4c2e-7f1a-4c3d-9e4f-a5b6c7d8e9f0',
      duration_ms: 12.5,
      attempts: 1,
      queued_ms: 0,
      performance_warning: false,
    };
    const data = {
      results: [{ task_id: 't1', text: 'Hire two backend engineers', document_id: 'd1', document_title: 'Hiring plan', similarity: 0.81 }],
      embedding_model: 'hashing-embedder',
      threshold: 0.2,
      unembedded_task_count: 0,
    };
    const success = { success: true, data, message: 'Found 1 task.', meta };
    expect(judge(answer('semantic-search', 200), success)).toBe(true);
    expect(judge(answer('semantic-search', 200), { ...success, data: { ...data, results: undefined } })).toBe(false);
    expect(judge(answer('semantic-search', 200), { ...success, meta: { ...meta, attempts: 'one' } })).toBe(false);
    const { meta: _, ...withoutMeta } = success;
    expect(judge(answer('semantic-search', 200), withoutMeta)).toBe(false);
  });

  it('log-mood: the failure envelope of a 400, as the contract describes it', () => {
    const meta = {
      tool: 'log-mood',
      trace_id: '0b6e4c2e-7f1a-4c3d-9e4f-a5b6c7d8e9f0',
      duration_ms: 1.5,
      attempts: 0,
      queued_ms: 0,
      performance_warning: false,
    };
    const error = {
      code: 'VALIDATION_ERROR',
      message: 'energy_level must be at most 10.',
      hint: 'Example of a valid call: {}',
      retryable: false,
      details: { fields: [{ field: 'energy_level', message: 'must be at most 10', code: 'too_big', expected: '<= 10', received: '15' }] },
    };
    const failure = { success: false, message: error.message, error, meta };
    expect(judge(answer('log-mood', 400), failure)).toBe(true);
    expect(judge(answer('log-mood', 400), { ...failure, error: { ...error, code: 'OOPS' } })).toBe(false);
    expect(judge(answer('log-mood', 400), { ...failure, error: { ...error, retryable: undefined } })).toBe(false);
    expect(judge(answer('log-mood', 400), { ...failure, success: true })).toBe(false);
  });
});
