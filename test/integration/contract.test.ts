/**
 * The contract suite, run for every registered tool, through the gateway and through the tool's
 * own worker: whatever the call, the answer is the envelope with the right code and status.
 */
import { describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import type { ToolResult } from '../../shared/core/contract.ts';
import { resetExampleRecords } from './fixtures.ts';
import { createToolApp } from '../../shared/http/tool-app.ts';
import logMood from '../../functions/table-tools/log-mood.ts';
import addDocument from '../../functions/documents/add-document.ts';
import semanticSearch from '../../functions/task-analysis/semantic-search.ts';
import { ENVELOPE, schemaErrors, unadmittedFields } from '../support/envelope.ts';
import { callTool, getJson, send, tenantA, tenantB, type CallOptions } from './helpers.ts';

type Catalog = { tools: { id: string; input_schema: Record<string, unknown> }[] };
let catalog: Promise<Catalog> | undefined;
/** The input schema of `toolId` as GET /tools serves it (read once). */
async function advertisedInput(toolId: string): Promise<Record<string, unknown>> {
  catalog ??= getJson<Catalog>('/tools').then(({ body }) => {
    if (!body.success) throw new Error(body.message);
    return body.data;
  });
  return (await catalog).tools.find((entry) => entry.id === toolId)!.input_schema;
}

let openApi: Promise<Record<string, any>> | undefined;
/** The schema of `toolId`'s answers with `status` in GET /openapi.json, with the document it resolves in. */
async function documentedAnswer(toolId: string, status: number): Promise<Record<string, unknown>> {
  openApi ??= send(new Request('http://edge-tools.test/openapi.json')).then((response) => response.json());
  const document = await openApi;
  return { ...structuredClone(document), $ref: `#/paths/~1tools~1${toolId}/post/responses/${status}/content/application~1json/schema` };
}

describe('catalog', () => {
  it('lists every tool with its JSON Schemas', async () => {
    const { status, body } = await getJson<{ tools: { id: string; input_schema: Record<string, unknown> }[] }>('/tools');
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    if (!body.success) return;
    expect(body.data.tools.map((t) => t.id)).toEqual(tools.map((t) => t.id));
    for (const entry of body.data.tools) {
      expect(entry.input_schema).toMatchObject({ type: 'object', additionalProperties: false });
    }
  });

  it('gives every tool a human title and its annotations', async () => {
    const { body } = await getJson<{ tools: { id: string; title: string; annotations: Record<string, unknown> }[] }>('/tools');
    if (!body.success) throw new Error(body.message);
    for (const entry of body.data.tools) {
      expect(entry.title.trim().length).toBeGreaterThan(0);
      expect(entry.title).not.toBe(entry.id);
      expect(Object.keys(entry.annotations).sort()).toEqual(['destructiveHint', 'idempotentHint', 'openWorldHint', 'readOnlyHint']);
      for (const hint of Object.values(entry.annotations)) expect(typeof hint).toBe('boolean');
    }
    const readOnly = body.data.tools.filter((entry) => entry.annotations.readOnlyHint).map((entry) => entry.id);
    expect(readOnly).toEqual(
      expect.arrayContaining(['semantic-search', 'get-document-context', 'query-task-graph', 'cluster-by-similarity']),
    );
    expect(readOnly).not.toContain('add-document');
  });

  it('answers /health', async () => {
    const { status, body } = await getJson('/health');
    expect(status).toBe(200);
    expect(body.success).toBe(true);
  });
});

describe("a tool's own worker", () => {
  const worker = createToolApp(logMood);
  const get = async (method: string, path: string) => {
    const response = await send(
      new Request(`http://edge-tools.test${path}`, { method, headers: { authorization: `Bearer ${tenantA.apiKey}` } }),
      worker,
    );
    return {
      status: response.status,
      body: (await response.json()) as { success: boolean; data?: unknown; error?: { code: string; hint?: string } },
    };
  };

  it('answers /health for its one tool', async () => {
    expect(await get('GET', '/health')).toMatchObject({ status: 200, body: { success: true, data: { status: 'ok', tools: 1 } } });
  });

  it('serves the records its answers link to, so a link leads somewhere on the worker that gave it', async () => {
    const own = createToolApp(addDocument);
    const added = await callTool<{ document_id: string }>(
      'add-document',
      { title: 'Own worker links', content: '- [ ] Follow the link' },
      { worker: own, path: '/' },
    );
    expect(added.status).toBe(200);
    const link = added.body.success
      ? added.body.links?.find((entry) => entry.url.includes(added.body.success ? added.body.data.document_id : ''))
      : undefined;
    expect(link?.url).toMatch(/^http:\/\/edge-tools\.test\/documents\//);
    const response = await send(new Request(link!.url, { headers: { authorization: `Bearer ${tenantA.apiKey}` } }), own);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      success: true,
      data: { document: { document_id: added.body.success ? added.body.data.document_id : '' } },
    });
  });

  it.each([
    ['GET', '/tools'],
    ['GET', '/openapi.json'],
    ['POST', '/mcp'],
    ['GET', '/executions'],
    ['POST', '/tools/log-mood'],
  ])('leaves %s %s to the gateway, and says so', async (method, path) => {
    const { status, body } = await get(method, path);
    expect(status).toBe(404);
    expect(body).toMatchObject({ success: false, error: { code: 'NOT_FOUND', hint: expect.stringContaining('served by the gateway') } });
    expect(body.error!.hint).toContain('POST /');
  });

  it('points a path naming its own tool to POST /, never to a record route it would fill', async () => {
    for (const path of ['/tools/log-mood', '/log-mood', '/tool/log-mood', '/tools/log_mood', '/tools/logMood']) {
      const { status, body } = await get('POST', path);
      expect(status, path).toBe(404);
      expect(body.error, path).toMatchObject({ code: 'NOT_FOUND', details: { suggestions: ['POST /'] } });
      expect(JSON.stringify(body.error), path).not.toContain('/tasks/log-mood');
    }
  });

  it('suggests no route of its own for a path naming another tool: the gateway serves that one', async () => {
    for (const path of ['/tools/list-plans', '/tool/list_plans', '/getDueFlashcards']) {
      const { status, body } = await get('POST', path);
      expect(status, path).toBe(404);
      expect(body.error, path).toMatchObject({ code: 'NOT_FOUND', hint: expect.stringContaining('served by the gateway') });
      expect(JSON.stringify(body.error), path).not.toMatch(/\/(tasks|documents)\/(list|get)/i);
      expect((body.error as { details?: { suggestions?: unknown } }).details?.suggestions, path).toBeUndefined();
    }
  });

  it('chooses its providers by the variables, as the gateway does', async () => {
    const own = createToolApp(semanticSearch);
    const withBadProvider = {
      fetch: (request: Request, env: Cloudflare.Env, ctx: ExecutionContext) =>
        own.fetch(request, { ...env, EMBEDDINGS_PROVIDER: 'word2vec' }, ctx),
    };
    const { status, body } = await callTool('semantic-search', semanticSearch.example, { worker: withBadProvider, path: '/' });
    expect(status).toBe(500);
    expect(body).toMatchObject({
      success: false,
      error: { code: 'CONFIG_ERROR', message: expect.stringContaining('EMBEDDINGS_PROVIDER must be one of: offline, openai, workers-ai') },
    });
  });
});

describe.each(tools.map((tool) => [tool.id, tool] as const))('%s', (toolId, tool) => {
  // One tenant per route, so the example call (a fixed row) succeeds on both.
  const routes: [string, CallOptions & { projectId: string }][] = [
    ['gateway', { key: tenantA.apiKey, projectId: tenantA.projectId }],
    ['own worker', { key: tenantB.apiKey, projectId: tenantB.projectId, worker: createToolApp(tool), path: '/' }],
  ];

  it('has a usable configuration', () => {
    expect(tool.unavailable?.error.message).toBeUndefined();
  });

  it('accepts its own example and rejects it with an unknown field added', () => {
    expect(tool.input.safeParse(tool.example).success).toBe(true);
    expect(tool.input.safeParse({ ...tool.example, not_a_field: 1 }).success).toBe(false);
  });

  it('advertises an input schema that admits its example and every field the validator knows, and no other', async () => {
    // Judged by a standard JSON Schema validator reading what GET /tools serves.
    const schema = await advertisedInput(toolId);
    expect(schemaErrors(schema, tool.example)).toEqual([]);
    const everyField = Object.fromEntries(Object.keys(tool.input.shape).map((field) => [field, null]));
    expect(Object.keys(everyField).length).toBeGreaterThan(0);
    expect(unadmittedFields(schema, everyField)).toEqual([]);
    expect(unadmittedFields(schema, { ...tool.example, not_a_field: 1 })).toEqual(['not_a_field']);
  });

  describe.each(routes)('through the %s', (_route, route) => {
    it('executes the example call, which succeeds, and answers an envelope', async () => {
      // The records the examples name belong to this route's tenant, fresh (delete and replace consume them).
      await resetExampleRecords(route.projectId);
      const { status, body } = await callTool(toolId, tool.example, route);
      expect(body, body.message).toMatchObject({ success: true });
      expect(status).toBe(200);
      expect(body.meta).toMatchObject({ tool: toolId, attempts: 1 });
      // The envelope as the README writes it, and the answer /openapi.json documents for the tool.
      expect(schemaErrors(ENVELOPE, body)).toEqual([]);
      expect(schemaErrors(await documentedAnswer(toolId, 200), body)).toEqual([]);
    });

    it.each([
      ['no API key', { key: null }, 401, 'UNAUTHENTICATED'],
      ['an unknown API key', { key: 'et_unknown' }, 401, 'UNAUTHENTICATED'],
      ['a malformed Authorization header', { headers: { authorization: 'Basic abc' } }, 401, 'UNAUTHENTICATED'],
      ['malformed JSON', { rawBody: '{"a": ' }, 400, 'VALIDATION_ERROR'],
      ['a JSON array', { rawBody: '[1, 2]' }, 400, 'VALIDATION_ERROR'],
      ['an empty body', { rawBody: '' }, 400, 'VALIDATION_ERROR'],
      ['a wrong content type', { contentType: 'text/plain' }, 400, 'VALIDATION_ERROR'],
      ['a __proto__ key', { rawBody: '{"__proto__": {"admin": true}}' }, 400, 'VALIDATION_ERROR'],
      ['a nested constructor key', { rawBody: '{"a": {"constructor": {"prototype": 1}}}' }, 400, 'VALIDATION_ERROR'],
      ['a number too large for a double', { rawBody: '{"a": 1e400}' }, 400, 'VALIDATION_ERROR'],
      ['a body over 1 MiB', { rawBody: JSON.stringify({ notes: 'x'.repeat(1024 * 1024) }) }, 413, 'PAYLOAD_TOO_LARGE'],
    ] as const)('answers %s with the error envelope', async (_case, options, status, code) => {
      const answer = await callTool(toolId, tool.example, { ...route, ...options });
      expect(answer.status).toBe(status);
      expect(answer.body).toMatchObject({ success: false, error: { code, retryable: false }, meta: { tool: toolId, attempts: 0 } });
      expect(schemaErrors(ENVELOPE, answer.body)).toEqual([]);
      if (!answer.body.success) {
        expect(answer.body.message).toBe(answer.body.error.message);
        expect(answer.body.error.hint).toBeTruthy();
        expect(JSON.stringify(answer.body)).not.toMatch(/at .*\.ts:\d+|stack/i);
      }
    });

    it('names an unknown field and lists the allowed ones', async () => {
      const { status, body } = await callTool(toolId, { ...tool.example, surprise: true }, route);
      expect(status).toBe(400);
      expect(body).toMatchObject({
        success: false,
        error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: 'surprise', code: 'unknown_field' }] } },
      });
      if (!body.success) {
        expect(body.error.message).toContain("Unknown field 'surprise'; allowed fields: ");
        expect(body.error.hint).toBe(`Example of a valid call: ${JSON.stringify(tool.example)}`);
      }
    });
  });
});

describe('a known route with another method', () => {
  const toolWorker = createToolApp(tools[0]!);
  it.each([
    ['GET', '/tools/log-mood', 'POST', undefined],
    ['HEAD', '/tools/no-such-tool', 'POST', undefined],
    ['PUT', '/tools', 'GET, HEAD', undefined],
    ['POST', '/health', 'GET, HEAD', undefined],
    ['DELETE', '/openapi.json', 'GET, HEAD', undefined],
    ['GET', '/mcp', 'POST', undefined],
    ['DELETE', '/mcp', 'POST', undefined],
    ['GET', '/', 'POST', toolWorker],
    ['PATCH', '/health', 'GET, HEAD', toolWorker],
  ] as const)('%s %s answers 405 with Allow: %s and the envelope', async (method, path, allow, worker) => {
    const response = await send(
      new Request(`http://edge-tools.test${path}`, { method, headers: { authorization: `Bearer ${tenantA.apiKey}` } }),
      worker,
    );
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe(allow);
    if (method === 'HEAD') return;
    const body = (await response.json()) as ToolResult<unknown>;
    expect(body).toMatchObject({
      success: false,
      error: { code: 'METHOD_NOT_ALLOWED', retryable: false, details: { allowed_methods: allow.split(', ') } },
      meta: { attempts: 0 },
    });
    if (!body.success) expect(body.message).toContain(`${method} is not allowed on ${path}`);
  });

  it('still answers the methods each route has', async () => {
    expect((await send(new Request('http://edge-tools.test/health', { method: 'HEAD' }))).status).toBe(200);
    expect((await getJson('/tools')).status).toBe(200);
  });
});

describe('unknown tools', () => {
  it('answers UNKNOWN_TOOL with the available ids in the hint and details', async () => {
    const { status, body } = await callTool('no-such-tool', {});
    expect(status).toBe(404);
    expect(body).toMatchObject({ success: false, error: { code: 'UNKNOWN_TOOL', details: { available_tools: tools.map((t) => t.id) } } });
    if (!body.success) for (const tool of tools) expect(body.error.message).toContain(tool.id);
  });

  it('answers an unknown route with the envelope', async () => {
    const { status, body } = await getJson('/nowhere');
    expect(status).toBe(404);
    expect(body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
  });
});
