/**
 * Hostile and malformed input against every tool, through the gateway (HTTP) and MCP, in workerd
 * against the local stand-ins: inputs generated from each tool's advertised schema and mutated
 * (test/support/schema-arbitrary.ts), with real ids of the calling project mixed in so that tools
 * run past their lookups, plus malformed bodies. Every answer must be the envelope with a 2xx or
 * 4xx status, never a 5xx, and every call that executed must have its trace row. Every numeric
 * field of every tool and read route is tried at its boundaries (test/support/numeric-boundaries.ts).
 */
import { inArray } from 'drizzle-orm';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { toolExecutions } from '../../drizzle/schema.ts';
import gateway from '../../functions/gateway.ts';
import { tools } from '../../functions/registry.ts';
import { ERROR_STATUS, type ToolResult } from '../../shared/core/contract.ts';
import { createOpenApiDocument } from '../../shared/http/openapi.ts';
import { numericBoundaries } from '../support/numeric-boundaries.ts';
import { inputArbitrary } from '../support/schema-arbitrary.ts';
import { createTenant, db, send } from './helpers.ts';

/** Generated inputs per tool and transport (fixed seeds), most of them valid so that tools run. */
const INPUTS = 24;
const MIX = { valid: 6, wild: 1, mutated: 2 };

/** Bodies no JSON Schema describes: broken JSON, wrong shapes, bytes that are not UTF-8. All are refused. */
const MALFORMED: [string, BodyInit][] = [
  ['truncated JSON', '{"title": "a'],
  ['a JSON array', '[{"title": "a"}]'],
  ['a JSON string', '"hello"'],
  ['JSON null', 'null'],
  ['a number too large for a double', '{"a": 1e400}'],
  ['bytes that are not UTF-8', new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc0, 0x22, 0x7d])],
  ['an escaped NUL key', '{"\\u0000": 1}'],
  ['an escaped lone surrogate', '{"title": "\\ud800", "content": "\\udfff"}'],
  ['duplicate keys', '{"title": "a", "title": "\\u0000"}'],
  ['deep nesting', `{"a": ${'['.repeat(5_000)}${']'.repeat(5_000)}}`],
];

let key: string;
let realIds: string[];

beforeAll(async () => {
  // A project of its own, with a rate limit that never interferes, and a document to find.
  key = (await createTenant('Hostile input', { rateLimitPerMinute: 1_000_000 })).apiKey;
  const added = await callHttp('add-document', {
    title: 'Targets',
    content: '- [ ] Hire a backend engineer\n- [ ] Interview candidates after the role is open\n- [ ] the',
  });
  const data = (added.body as { data: { document_id: string; tasks: { task_id: string }[] } }).data;
  realIds = [data.document_id, ...data.tasks.map((task) => task.task_id)];
});

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** Half the inputs name this project's real documents and tasks instead of random ids. */
function withRealIds(input: unknown, index: number): unknown {
  if (index % 2 === 0) return input;
  let n = index;
  return JSON.parse(JSON.stringify(input).replace(UUID, () => realIds[n++ % realIds.length]!)) as unknown;
}

async function callHttp(toolId: string, body: unknown, raw?: BodyInit) {
  const response = await send(
    new Request(`http://edge-tools.test/tools/${toolId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: raw ?? JSON.stringify(body),
    }),
    gateway,
  );
  return { status: response.status, body: (await response.json()) as ToolResult<unknown> };
}

/** A tools/call over MCP: the HTTP status, and the envelope (or the JSON-RPC error of a protocol fault). */
async function callMcp(toolId: string, input: unknown) {
  const response = await send(
    new Request('http://edge-tools.test/mcp', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: toolId, arguments: input } }),
    }),
    gateway,
  );
  const message = (await response.json()) as {
    result?: { structuredContent: ToolResult<unknown>; isError: boolean };
    error?: { code: number };
  };
  return { status: response.status, message };
}

/** Asserts the envelope of an answer is never a server error, and returns its trace id when it executed. */
function checkEnvelope(context: string, status: number, body: ToolResult<unknown>): string | undefined {
  expect(body, context).toMatchObject({
    success: expect.any(Boolean),
    message: expect.any(String),
    meta: { trace_id: expect.any(String) },
  });
  if (!body.success) {
    expect(ERROR_STATUS[body.error.code], `${context}: ${body.error.code} ${body.error.message}`).toBeLessThan(500);
    expect(status, context).toBeLessThan(500);
  }
  return body.meta.attempts > 0 ? body.meta.trace_id : undefined;
}

async function expectTraced(traceIds: string[]) {
  if (traceIds.length === 0) return;
  const rows = await db.select({ id: toolExecutions.id }).from(toolExecutions).where(inArray(toolExecutions.id, traceIds));
  expect(rows.map((row) => row.id).sort()).toEqual([...traceIds].sort());
}

describe('a body that gives a key twice', () => {
  it('is refused as ambiguous over HTTP, naming the key, at the top and nested, and nothing is written', async () => {
    const post = (body: string) =>
      send(
        new Request('http://edge-tools.test/tools/log-mood', {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body,
        }),
      );
    const top = await post('{"user_id":"http-duplicate","mood":"happy","mood":"sad","energy_level":5,"timestamp":"2025-10-05T14:30:00Z"}');
    expect(top.status).toBe(400);
    const answer = (await top.json()) as ToolResult<unknown>;
    expect(answer).toMatchObject({
      success: false,
      error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: 'mood', code: 'duplicate_key' }] } },
    });
    expect(answer.success === false && answer.error.message).toContain("Field 'mood' is given twice");
    const nested = await send(
      new Request('http://edge-tools.test/tools/write-plan', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: '{"title":"Duplicate plan","items":[{"title":"One"},{"title":"Two","title":"Three"}]}',
      }),
    );
    expect(nested.status).toBe(400);
    expect(await nested.json()).toMatchObject({ error: { details: { fields: [{ field: 'items[1].title', code: 'duplicate_key' }] } } });
  });
});

describe.each(tools.map((tool) => [tool.id, tool] as const))('%s under hostile input', (toolId, tool) => {
  const inputs = (seed: number) => fc.sample(inputArbitrary(tool.jsonSchemas().input, MIX), { seed, numRuns: INPUTS }).map(withRealIds);

  it('answers every generated input over HTTP with the envelope and no 5xx; every execution is traced', async () => {
    const executed: string[] = [];
    for (const input of inputs(409)) {
      const { status, body } = await callHttp(toolId, input);
      const traceId = checkEnvelope(`${toolId} ${JSON.stringify(input).slice(0, 200)}`, status, body);
      if (traceId) executed.push(traceId);
    }
    await expectTraced(executed);
  });

  it('answers every generated input over MCP with the envelope and no 5xx; every execution is traced', async () => {
    const executed: string[] = [];
    for (const input of inputs(410)) {
      const context = `${toolId} over MCP ${JSON.stringify(input).slice(0, 200)}`;
      const { status, message } = await callMcp(toolId, input);
      expect(status, context).toBeLessThan(500);
      if (!message.result) continue; // a JSON-RPC protocol fault (arguments that are not an object)
      expect(message.result.isError, context).toBe(!message.result.structuredContent.success);
      const traceId = checkEnvelope(context, status, message.result.structuredContent);
      if (traceId) executed.push(traceId);
    }
    await expectTraced(executed);
  });

  it.each(MALFORMED)('refuses %s with a 4xx envelope', async (_case, raw) => {
    const { status, body } = await callHttp(toolId, undefined, raw);
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(500);
    expect(body).toMatchObject({ success: false, meta: { attempts: 0 } });
  });
});

/**
 * The boundaries of every numeric field, read from the advertised schemas (each tool's input, and
 * each read route's query parameters in the OpenAPI document): past a bound, 400 VALIDATION_ERROR
 * naming the field before anything runs; within, an answer that is never a server error.
 */
describe.each(tools.map((tool) => [tool.id, tool] as const))('%s at the boundaries of its numeric fields', (toolId, tool) => {
  const cases = numericBoundaries(tool.jsonSchemas().input, tool.example as Record<string, unknown>);

  it.skipIf(cases.length === 0)('refuses every value past a bound as input, naming the field, and never answers 5xx', async () => {
    for (const c of cases) {
      const context = `${toolId} ${c.field} = ${c.value}`;
      const { status, body } = await callHttp(toolId, withRealIds(c.input, 1));
      expect(status, `${context}: ${JSON.stringify(body).slice(0, 300)}`).toBeLessThan(500);
      if (c.inRange || body.success) continue;
      if (
        body.error.code !== 'VALIDATION_ERROR' ||
        !body.error.details?.fields?.some((f) => f.field === c.field || f.field.startsWith(`${c.field}[`))
      ) {
        // Refused for another reason than this field (the example names the field's partner too): not at this boundary.
        continue;
      }
      expect(status, context).toBe(400);
      expect(body.meta.attempts, context).toBe(0);
    }
  });
});

describe('read routes at the boundaries of their numeric query parameters', () => {
  const document = createOpenApiDocument(tools)('http://edge-tools.test') as {
    paths: Record<string, { get?: { parameters?: { name: string; in: string; schema: Record<string, unknown> }[] } }>;
  };
  const routes = Object.entries(document.paths).flatMap(([path, item]) => {
    const query = (item.get?.parameters ?? []).filter((p) => p.in === 'query');
    const schema = { properties: Object.fromEntries(query.map((p) => [p.name, p.schema])) };
    const cases = numericBoundaries(schema, {});
    return cases.length > 0 ? [[path, cases] as const] : [];
  });

  it('reads numeric parameters from the OpenAPI document', () => {
    expect(routes.map(([path]) => path)).toContain('/documents/{id}');
  });

  it.each(routes)('%s: refuses every value past a bound, naming the parameter, and never answers 5xx', async (path, cases) => {
    for (const c of cases) {
      const url = new URL(`http://edge-tools.test${path.replace(/\{[^}]+\}/g, () => realIds[0]!)}`);
      url.searchParams.set(c.field, String(c.input[c.field]));
      const response = await send(new Request(url, { headers: { authorization: `Bearer ${key}` } }), gateway);
      const body = (await response.json()) as ToolResult<unknown>;
      const context = `${url.pathname}?${url.searchParams} -> ${response.status} ${JSON.stringify(body).slice(0, 200)}`;
      expect(response.status, context).toBeLessThan(500);
      if (c.inRange) continue;
      expect(response.status, context).toBe(400);
      expect(body, context).toMatchObject({
        success: false,
        error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: c.field }] } },
      });
    }
  });
});
