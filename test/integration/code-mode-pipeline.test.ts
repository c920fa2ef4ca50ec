/**
 * A code-mode execution is a call of the pipeline, not a copy of it: it counts against its key's
 * rate limit (and its calls count too), a repeated `code` key is refused over MCP as over HTTP, its
 * refusals and executions are rows like any call's, its span carries its content as a direct
 * call's does, and when its code throws after a call failed, the model is told which call and why.
 */
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { toolExecutions, toolRefusals } from '../../drizzle/schema.ts';
import { tools } from '../../functions/registry.ts';
import { createGateway } from '../../shared/http/app.ts';
import type { Env } from '../../shared/runtime/env.ts';
import { runCodeOver, waitForRows } from './code-mode-helpers.ts';
import { createTenant, db, send } from './helpers.ts';

const gateway = createGateway(tools);

/** Runs `code` over HTTP through the gateway with `callEnv` (the test's bindings, changed). */
async function run(key: string, code: string, callEnv: Partial<Env> = {}) {
  const ctx = createExecutionContext();
  const response = await gateway.fetch(
    new Request('http://edge-tools.test/code', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ code }),
    }),
    { ...env, ...callEnv } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

describe('the rate limit', () => {
  it.skipIf(!env.TEST_SERVICES.redisUrl)(
    'counts executions and their calls against the key: past it, both are refused and recorded',
    async () => {
      const tenant = await createTenant('Code rate limit', { rateLimitPerMinute: 3 });
      const callEnv = { CONCURRENCY_NAMESPACE: `code-rate-${crypto.randomUUID()}` };
      // One execution and one call inside it: two of the three.
      const first = await run(tenant.apiKey, 'async () => (await tools.listPlans({ limit: 1 })).success', callEnv);
      expect(first.status).toBe(200);
      expect(first.body.data.result).toBe(true);
      // The third: an execution whose call is the fourth, refused inside.
      const second = await run(tenant.apiKey, 'async () => (await tools.listPlans({ limit: 1 })).error?.code', callEnv);
      expect(second.status).toBe(200);
      expect(second.body.data.result).toBe('RATE_LIMITED');
      // The fifth: the execution itself is refused, and nothing runs.
      const refused = await run(tenant.apiKey, 'async () => 1', callEnv);
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('RATE_LIMITED');
      expect(refused.body.meta).toMatchObject({ tool: 'code', attempts: 0 });
      const rows = await waitForRows(
        () =>
          db
            .select()
            .from(toolRefusals)
            .where(and(eq(toolRefusals.projectId, tenant.projectId), eq(toolRefusals.tool, 'code'))),
        1,
      );
      expect(rows.map((row) => row.code)).toEqual(['RATE_LIMITED']);
    },
  );
});

describe('the same refusals over both surfaces', () => {
  it('a `code` key given twice is refused over MCP as over HTTP: VALIDATION_ERROR duplicate_key, nothing run, a refusal row', async () => {
    const tenant = await createTenant('Code duplicate key');
    const body =
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":{"code":"async () => 1","code":"async () => 2"}}}';
    const response = await send(
      new Request('http://edge-tools.test/mcp/code', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tenant.apiKey}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
        },
        body,
      }),
    );
    const envelope = ((await response.json()) as { result: { structuredContent: Record<string, any> } }).result.structuredContent;
    expect(envelope.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'code', code: 'duplicate_key' }] } });
    const overHttp = await send(
      new Request('http://edge-tools.test/code', {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
        body: '{"code":"async () => 1","code":"async () => 2"}',
      }),
    );
    expect(((await overHttp.json()) as Record<string, any>).error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field: 'code', code: 'duplicate_key' }] },
    });
    const rows = await waitForRows(
      () =>
        db
          .select()
          .from(toolRefusals)
          .where(and(eq(toolRefusals.projectId, tenant.projectId), eq(toolRefusals.tool, 'code'))),
      2,
    );
    expect(rows.map((row) => row.code)).toEqual(['VALIDATION_ERROR', 'VALIDATION_ERROR']);
    const executed = await db.select().from(toolExecutions).where(eq(toolExecutions.projectId, tenant.projectId));
    expect(executed).toEqual([]);
  });
});

describe('failures reach the model', () => {
  it('code that throws after a failed call: the message and error.details.calls name the call, its code and its message, over HTTP and MCP', async () => {
    const tenant = await createTenant('Code failures');
    const code = 'async () => { const found = await tools.semanticSearch({ query: "" }); return found.data.results.length; }';
    for (const transport of ['http', 'mcp'] as const) {
      const { body } = await runCodeOver(transport, code, { key: tenant.apiKey });
      if (body.success) throw new Error('expected the code to fail');
      expect(body.error.details).toMatchObject({ reason: 'code_threw' });
      const [call] = body.error.details!.calls as { tool: string; error_code: string; error_message: string }[];
      expect(call).toMatchObject({ tool: 'semantic-search', error_code: 'VALIDATION_ERROR' });
      expect(call!.error_message).toContain('query');
      expect(body.error.message).toContain('semantic-search answered VALIDATION_ERROR');
      expect(body.error.message).toContain(call!.error_message);
    }
  });
});

describe('the report path', () => {
  it('an execution is a row with its code as input, and its span carries its code and its answer when content capture is on', async () => {
    const tenant = await createTenant('Code report');
    const callEnv = {
      OTEL_EXPORTER_OTLP_ENDPOINT: env.TEST_SERVICES.otlpUrl,
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
    };
    const code = 'async () => ({ plans: (await tools.listPlans({ limit: 1 })).success })';
    const { body } = await run(tenant.apiKey, code, callEnv);
    expect(body.data.result).toEqual({ plans: true });
    const traceId = body.meta.trace_id as string;
    const [row] = await waitForRows(() => db.select().from(toolExecutions).where(eq(toolExecutions.id, traceId)), 1);
    expect(row!.input).toEqual({ code });
    // The receiver decodes every export with the official OTLP definitions.
    for (;;) {
      const exports = (await (await fetch(`${env.TEST_SERVICES.otlpUrl}/__received`)).json()) as { body?: any }[];
      const spans = exports.flatMap((exported) =>
        (exported.body?.resourceSpans ?? []).flatMap((resource: any) => resource.scopeSpans.flatMap((scope: any) => scope.spans)),
      );
      const attributes = spans
        .map((span: any) => Object.fromEntries(span.attributes.map(({ key, value }: any) => [key, Object.values(value)[0]])))
        .find((found: Record<string, unknown>) => found['edge_tools.trace_id'] === traceId);
      if (attributes) {
        expect(JSON.parse(attributes['gen_ai.tool.call.arguments'] as string)).toEqual({ code });
        expect(JSON.parse(attributes['gen_ai.tool.call.result'] as string)).toMatchObject({ result: { plans: true } });
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
});
