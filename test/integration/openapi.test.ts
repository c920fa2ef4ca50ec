/**
 * The machine-readable descriptions of the HTTP routes, checked against what the worker answers:
 * the OpenAPI document (`GET /openapi.json`) and the OpenAI export (`GET /tools?format=openai`).
 */
import { Validator } from '@cfworker/json-schema';
import { describe, expect, it, vi } from 'vitest';
import { tools } from '../../functions/registry.ts';
import logMood from '../../functions/table-tools/log-mood.ts';
import { ERROR_STATUS } from '../../shared/core/contract.ts';
import type { OpenAiFunctionTool } from '../../shared/http/openai-export.ts';
import { callTool, getJson, send, tenantA, uniqueTimestamp } from './helpers.ts';
import { runCodeOver, waitForRows } from './code-mode-helpers.ts';

type Document = Record<string, any>;

async function openApi(): Promise<Document> {
  const response = await send(new Request('http://edge-tools.test/openapi.json'));
  expect(response.status).toBe(200);
  return response.json();
}

/** Validates `value` against the schema at `pointer` inside the document (its `$ref`s resolve in it). */
function validateAt(document: Document, pointer: string, value: unknown) {
  const root = { ...structuredClone(document), $ref: pointer };
  return new Validator(root, '2020-12', false).validate(value);
}

const encode = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');
const responseSchema = (path: string, status: number) =>
  `#/paths/${encode(path)}/post/responses/${status}/content/application~1json/schema`;

/** Every `$ref` in the document, with whether it resolves. */
function references(document: Document): { ref: string; resolves: boolean }[] {
  const found: { ref: string; resolves: boolean }[] = [];
  const visit = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') {
        const target = value
          .slice(2)
          .split('/')
          .reduce<any>((at, part) => at?.[part.replaceAll('~1', '/').replaceAll('~0', '~')], document);
        found.push({ ref: value, resolves: target !== undefined });
      } else visit(value);
    }
  };
  visit(document);
  return found;
}

describe('GET /openapi.json', () => {
  it('is OpenAPI 3.1 with every tool route, the catalog and health, on the server it was asked from', async () => {
    const document = await openApi();
    expect(document).toMatchObject({ openapi: '3.1.0', info: { title: 'edge-tools' }, servers: [{ url: 'http://edge-tools.test' }] });
    const observability = ['/dashboard', '/executions', '/executions/{trace_id}', '/grants', '/grants/{grant_id}', '/metrics', '/refusals'];
    expect(Object.keys(document.paths).sort()).toEqual(
      [
        '/health',
        '/health/ready',
        '/openapi.json',
        '/tools',
        '/documents/{id}',
        '/tasks/{id}',
        '/code',
        '/code/types',
        ...observability,
        ...tools.map((tool) => `/tools/${tool.id}`),
      ].sort(),
    );
    expect(document.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const { ref, resolves } of references(document)) expect(resolves, ref).toBe(true);
  });

  it.each(tools.map((tool) => [tool.id, tool] as const))(
    'documents %s with a request body its example fits, and every error status',
    async (id, tool) => {
      const document = await openApi();
      const operation = document.paths[`/tools/${id}`].post;
      expect(operation).toMatchObject({ operationId: id, description: tool.description, security: [{ apiKey: [] }] });
      const body = operation.requestBody.content['application/json'];
      // Inline, with no reference at all: hosts that make a tool of each operation pass it on as it is.
      expect(body.example).toEqual(tool.example);
      expect(JSON.stringify(body.schema)).not.toMatch(/"\$(ref|defs)"/);
      // The request body is judged by a standard validator against the tool's hand-written example
      // (the document as a whole: test/unit/openapi-document.test.ts, by an OpenAPI validator).
      const bodyAt = `#/paths/${encode(`/tools/${id}`)}/post/requestBody/content/application~1json/schema`;
      expect(validateAt(document, bodyAt, tool.example)).toMatchObject({ valid: true });
      expect(validateAt(document, bodyAt, { ...tool.example, not_a_field: 1 }).valid).toBe(false);
      expect(document.components.schemas[`${id}.data`]).toMatchObject({ type: 'object' });
      const statuses = Object.keys(operation.responses).map(Number);
      // 405 answers other methods than the operation's, so it is not one of the operation's answers.
      expect(statuses).toEqual(expect.arrayContaining([200, ...Object.values(ERROR_STATUS).filter((status) => status !== 405), 503]));
      expect(statuses).not.toContain(405);
      expect(operation.responses[400].description).toContain('VALIDATION_ERROR');
      expect(operation.responses[404].description).toContain('NOT_FOUND');
    },
  );

  it('describes the answers the worker really gives, success and failure', async () => {
    const document = await openApi();
    // Its own user id: other files' uniqueTimestamp() runs over the same instants.
    const success = await callTool('log-mood', { ...logMood.example, user_id: 'openapi-test', timestamp: uniqueTimestamp() });
    expect(success.status).toBe(200);
    expect(validateAt(document, responseSchema('/tools/log-mood', 200), success.body)).toMatchObject({ valid: true });

    const invalid = await callTool('log-mood', { ...logMood.example, energy_level: 15, surprise: 1 });
    expect(invalid.status).toBe(400);
    expect(validateAt(document, responseSchema('/tools/log-mood', 400), invalid.body)).toMatchObject({ valid: true });
    // The success schema does not accept a failure: the envelope's variants are told apart.
    expect(validateAt(document, responseSchema('/tools/log-mood', 200), invalid.body).valid).toBe(false);

    const unauthenticated = await callTool('log-mood', logMood.example, { key: null });
    expect(validateAt(document, responseSchema('/tools/log-mood', 401), unauthenticated.body)).toMatchObject({ valid: true });

    const catalog = await getJson('/tools');
    expect(validateAt(document, '#/paths/~1tools/get/responses/200/content/application~1json/schema', catalog.body)).toMatchObject({
      valid: true,
    });
  });

  it("describes code mode's routes and their real answers, and the executions of one execution's code", async () => {
    const document = await openApi();
    const operation = document.paths['/code'].post;
    expect(operation.parameters.map((p: { name: string }) => p.name)).toEqual(['Idempotency-Key']);
    const body = '#/paths/~1code/post/requestBody/content/application~1json/schema';
    expect(validateAt(document, body, operation.requestBody.content['application/json'].example)).toMatchObject({ valid: true });
    expect(validateAt(document, body, { code: 'async () => 1', extra: 1 }).valid).toBe(false);
    expect(validateAt(document, body, { code: '' }).valid).toBe(false);

    const userId = `openapi-code-${crypto.randomUUID()}`;
    const ran = await runCodeOver(
      'http',
      `async () => { console.log("two calls"); const written = await tools.logMood(${JSON.stringify({ ...logMood.example, user_id: userId, timestamp: uniqueTimestamp() })}); const missing = await tools["get-document-context"]({ task_ids: ["00000000-0000-4000-8000-000000000000"] }); return [written.success, missing.error?.code]; }`,
    );
    expect(ran.status).toBe(200);
    expect(validateAt(document, responseSchema('/code', 200), ran.body)).toMatchObject({ valid: true });
    const threw = await runCodeOver('http', 'async () => { throw new Error("no") }');
    expect(threw.status).toBe(400);
    expect(validateAt(document, responseSchema('/code', 400), threw.body)).toMatchObject({ valid: true });
    expect(validateAt(document, responseSchema('/code', 200), threw.body).valid).toBe(false);

    const types = await getJson('/code/types', tenantA.apiKey);
    expect(types.status).toBe(200);
    expect(validateAt(document, '#/paths/~1code~1types/get/responses/200/content/application~1json/schema', types.body)).toMatchObject({
      valid: true,
    });

    // GET /executions?execution=<trace id of the code> lists its two calls, each with execution_id.
    expect(document.paths['/executions'].get.parameters.map((p: { name: string }) => p.name)).toContain('execution');
    const executionId = ran.body.meta.trace_id;
    const listing = await waitForRows(async () => {
      const found = await getJson<{ executions: unknown[] }>(
        `/executions?execution=${executionId}&response_format=detailed`,
        tenantA.apiKey,
      );
      return found.body.success ? found.body.data.executions : [];
    }, 2);
    expect(listing.map((row) => (row as { execution_id: string }).execution_id)).toEqual([executionId, executionId]);
    const page = await getJson(`/executions?execution=${executionId}&response_format=detailed`, tenantA.apiKey);
    const executionsSchema = `#/paths/~1executions/get/responses/200/content/application~1json/schema`;
    expect(validateAt(document, executionsSchema, page.body)).toMatchObject({ valid: true });
    // The schema knows execution_id: a listing whose execution_id is a number is not valid.
    const forged = structuredClone(page.body) as { data: { executions: Record<string, unknown>[] } };
    forged.data.executions[0]!.execution_id = 42;
    expect(validateAt(document, executionsSchema, forged).valid).toBe(false);
  }, 60_000);

  it('describes the observability routes and their real answers', async () => {
    const document = await openApi();
    const schemaOf = (path: string, status: number) => `#/paths/${encode(path)}/get/responses/${status}/content/application~1json/schema`;
    const call = await callTool('log-mood', { ...logMood.example, user_id: 'openapi-observability', timestamp: uniqueTimestamp() });
    const traceId = call.body.meta.trace_id;

    // The trace is written after the answer: wait until it is readable.
    const one = await vi.waitFor(async () => {
      const found = await getJson(`/executions/${traceId}`, tenantA.apiKey);
      expect(found.status).toBe(200);
      return found;
    });
    const listing = await getJson(`/executions?tool=log-mood&response_format=detailed&limit=5`, tenantA.apiKey);
    expect(listing.status).toBe(200);
    expect(validateAt(document, schemaOf('/executions', 200), listing.body)).toMatchObject({ valid: true });
    expect(validateAt(document, schemaOf('/executions/{trace_id}', 200), one.body)).toMatchObject({ valid: true });
    const missing = await getJson(`/executions/${crypto.randomUUID()}`, tenantA.apiKey);
    expect(validateAt(document, schemaOf('/executions/{trace_id}', 404), missing.body)).toMatchObject({ valid: true });
    const metrics = await getJson('/metrics?window=1h', tenantA.apiKey);
    expect(validateAt(document, schemaOf('/metrics', 200), metrics.body)).toMatchObject({ valid: true });
    const refused = await callTool('log-mood', { ...logMood.example, energy_level: 99 });
    expect(refused.status).toBe(400);
    const refusals = await vi.waitFor(async () => {
      const found = await getJson<{ refusals: { trace_id: string }[] }>('/refusals?limit=100', tenantA.apiKey);
      expect(found.body.success && found.body.data.refusals.map((r) => r.trace_id)).toContain(refused.body.meta.trace_id);
      return found;
    });
    expect(validateAt(document, schemaOf('/refusals', 200), refusals.body)).toMatchObject({ valid: true });
    const invalid = await getJson('/metrics?window=soon', tenantA.apiKey);
    expect(validateAt(document, schemaOf('/metrics', 400), invalid.body)).toMatchObject({ valid: true });

    const parameters = (path: string) => document.paths[path].get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`);
    expect(parameters('/executions')).toEqual(
      expect.arrayContaining([
        'query:tool',
        'query:status',
        'query:error_code',
        'query:since',
        'query:until',
        'query:min_duration_ms',
        'query:cursor',
        'query:limit',
        'query:response_format',
      ]),
    );
    expect(parameters('/metrics')).toEqual(
      expect.arrayContaining(['query:window', 'query:since', 'query:until', 'query:tool', 'query:format']),
    );
    expect(parameters('/executions/{trace_id}')).toEqual(['path:trace_id']);
    expect(Object.keys(document.paths['/metrics'].get.responses[200].content).sort()).toEqual(['application/json', 'text/plain']);
  }, 30_000);

  it('documents the read routes for records, parameters and answers, as the worker gives them', async () => {
    const document = await openApi();
    const operation = document.paths['/documents/{id}'].get;
    expect(operation).toMatchObject({ operationId: 'getDocument', security: [{ apiKey: [] }] });
    expect(operation.parameters.map((p: Document) => [p.name, p.in])).toEqual([
      ['id', 'path'],
      ['chunk', 'query'],
      ['cursor', 'query'],
      ['response_format', 'query'],
    ]);
    const added = await callTool<{ document_id: string; tasks: { task_id: string }[] }>('add-document', {
      title: 'OpenAPI record',
      content: '- [ ] Describe the record route',
    });
    if (!added.body.success) throw new Error(added.body.message);
    const headers = { authorization: `Bearer ${tenantA.apiKey}` };
    for (const [path, url] of [
      ['/documents/{id}', `/documents/${added.body.data.document_id}?response_format=detailed`],
      ['/tasks/{id}', `/tasks/${added.body.data.tasks[0]!.task_id}?response_format=detailed`],
      ['/tasks/{id}', `/tasks/${crypto.randomUUID()}`],
    ] as const) {
      const response = await send(new Request(`http://edge-tools.test${url}`, { headers }));
      const pointer = `#/paths/${encode(path)}/get/responses/${response.status}/content/application~1json/schema`;
      expect(validateAt(document, pointer, await response.json()), url).toMatchObject({ valid: true });
    }
  });
});

describe('GET /tools?format=openai', () => {
  it('lists every tool as an OpenAI function definition in strict mode', async () => {
    const { status, body } = await getJson<{ tools: OpenAiFunctionTool[] }>('/tools?format=openai');
    expect(status).toBe(200);
    if (!body.success) throw new Error(body.message);
    expect(body.data.tools.map((definition) => definition.function.name)).toEqual(tools.map((tool) => tool.id));
    for (const definition of body.data.tools) {
      expect(definition).toMatchObject({ type: 'function', function: { parameters: { type: 'object', additionalProperties: false } } });
    }
    // submit-health-form's free-form JSON `symptoms`, which strict mode cannot say as an object, is its JSON text there.
    expect(body.data.tools.filter((definition) => !definition.function.strict).map((definition) => definition.function.name)).toEqual([]);
    expect(body.message).toContain(
      `${tools.length} tools as OpenAI function definitions in strict mode. Send null for an optional field to leave it out.`,
    );
    // The idempotency note, said once for the developer (each function's description is the tool's purpose alone).
    expect(body.message).toContain('Every tool that writes takes an idempotency key (header Idempotency-Key)');
  });

  it('promises what the validator accepts: a strict call with null for every optional field runs', async () => {
    const { body } = await getJson<{ tools: OpenAiFunctionTool[] }>('/tools?format=openai');
    if (!body.success) throw new Error(body.message);
    const parameters = body.data.tools.find((definition) => definition.function.name === 'semantic-search')!.function.parameters as {
      required: string[];
    };
    const call = Object.fromEntries(parameters.required.map((field) => [field, field === 'query' ? 'hire backend engineers' : null]));
    expect(Object.keys(call).length).toBeGreaterThan(1);
    const { status, body: answer } = await callTool('semantic-search', call);
    expect(answer).toMatchObject({ success: true });
    expect(status).toBe(200);
  });

  it('refuses an unknown format with the valid ones', async () => {
    const { status, body } = await getJson('/tools?format=anthropic');
    expect(status).toBe(400);
    expect(body).toMatchObject({
      success: false,
      error: { code: 'VALIDATION_ERROR', message: expect.stringContaining("must be 'openai', 'gemini' or absent") },
    });
  });
});
