/**
 * A call whose caller goes away, through the real pipeline in workerd: the request's one database
 * client serves authorisation, the tool and the trace. The tool's query in flight is aborted with
 * the caller (the fault proxy holds it unanswered and sees its client give up), and the trace, which
 * the same client writes after the answer, is still recorded.
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { and, eq, sql } from 'drizzle-orm';
import { expect, it, vi } from 'vitest';
import * as z from 'zod';
import { toolExecutions } from '../../drizzle/schema.ts';
import { ok } from '../../shared/core/contract.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { createToolApp } from '../../shared/http/tool-app.ts';
import { db, tenantA } from './helpers.ts';

/** This file's own fault scripts: the proxy keeps them per database name. */
const DATABASE = 'abandoned_call';
const faultyUrl = env.TEST_SERVICES.faultyDatabaseUrl.replace(/\/[^/]*$/, `/${DATABASE}`);

/** What the proxy has seen of the tool's query: received, and given up by its client. */
async function seen(): Promise<{ seen: number; abandoned: number }> {
  const url = new URL('/__seen', env.TEST_SERVICES.faultControlUrl);
  url.search = new URLSearchParams({ match: 'pg_sleep', database: DATABASE }).toString();
  return (await fetch(url)).json();
}

const tool = defineTool({
  id: 'abandoned-query',
  toolset: 'documents',
  title: 'Test tool abandoned-query',
  annotations: READ_ONLY,
  description: 'Runs one query that is never answered.',
  input: z.strictObject({}),
  output: z.object({ slept: z.boolean() }),
  example: {},
  async execute(_, { db: toolDb }) {
    await toolDb.execute(sql`select pg_sleep(3600)`);
    return ok({ slept: true }, 'Slept.');
  },
});

it("aborts the tool's query when the caller goes away, and still records the call's trace", async () => {
  const scripted = await fetch(env.TEST_SERVICES.faultControlUrl, {
    method: 'POST',
    body: JSON.stringify({ count: 1, fault: 'hang', match: 'pg_sleep', database: DATABASE }),
  });
  expect(scripted.status).toBe(200);
  const caller = new AbortController();
  const ctx = createExecutionContext();
  const request = new Request('http://edge-tools.test/', {
    method: 'POST',
    headers: { authorization: `Bearer ${tenantA.apiKey}`, 'content-type': 'application/json' },
    body: '{}',
    signal: caller.signal,
  });
  const answered = Promise.resolve(createToolApp(tool).fetch(request, { ...env, DATABASE_URL: faultyUrl }, ctx)).then(
    (response) => response.text(),
    (error: unknown) => String(error),
  );

  await vi.waitFor(async () => expect(await seen()).toEqual({ seen: 1, abandoned: 0 }), { timeout: 20_000, interval: 20 });
  caller.abort(new Error('the caller went away'));
  await vi.waitFor(async () => expect(await seen()).toEqual({ seen: 1, abandoned: 1 }), { timeout: 20_000, interval: 20 });
  await answered;
  await waitOnExecutionContext(ctx);

  const traces = await db
    .select({ status: toolExecutions.status, attempts: toolExecutions.attempts })
    .from(toolExecutions)
    .where(and(eq(toolExecutions.tool, tool.id), eq(toolExecutions.projectId, tenantA.projectId)));
  expect(traces).toEqual([{ status: 'error', attempts: 1 }]);
});
