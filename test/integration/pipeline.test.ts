/**
 * The pipeline's guarantees that no registered tool exercises on purpose: a tool that throws, or
 * answers outside its declared output, still yields the envelope, and the stack stays in the trace.
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toolExecutions } from '../../drizzle/schema.ts';
import { createGateway } from '../../shared/http/app.ts';
import { ok } from '../../shared/core/contract.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { db, tenantA } from './helpers.ts';

const input = z.strictObject({ text: z.string().max(100) });

const throwing = defineTool({
  id: 'always-throws',
  title: 'Test tool always-throws',
  annotations: READ_ONLY,
  description: 'Throws.',
  input,
  output: z.object({}),
  example: { text: 'boom' },
  async execute() {
    throw new Error('secret internal detail');
  },
});

const lying = defineTool({
  id: 'wrong-output',
  title: 'Test tool wrong-output',
  annotations: READ_ONLY,
  description: 'Answers outside its output schema.',
  input,
  output: z.object({ count: z.int() }),
  example: { text: 'x' },
  async execute() {
    return ok({ count: 'many' } as unknown as { count: number }, 'Counted.');
  },
});

const echo = defineTool({
  id: 'echo-project',
  title: 'Test tool echo-project',
  annotations: READ_ONLY,
  description: 'Answers the calling project.',
  input,
  output: z.object({ project_id: z.string(), text: z.string() }),
  example: { text: 'x' },
  async execute({ text }, { project }) {
    return ok({ project_id: project.id, text }, 'Echoed.');
  },
});

const app = createGateway([throwing, lying, echo]);

async function call(toolId: string, body: unknown) {
  const ctx = createExecutionContext();
  const response = await app.fetch(
    new Request(`http://edge-tools.test/tools/${toolId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenantA.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
    env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

describe('pipeline', () => {
  it('turns a thrown error into UNKNOWN_ERROR; the stack goes to the trace only', async () => {
    const { status, body } = await call('always-throws', { text: 'boom' });
    expect(status).toBe(500);
    expect(body).toMatchObject({ success: false, error: { code: 'UNKNOWN_ERROR', retryable: false }, meta: { attempts: 1 } });
    expect(JSON.stringify(body)).not.toContain('secret internal detail');
    expect(body.error.message).toContain(body.meta.trace_id);
    const [trace] = await db.select().from(toolExecutions).where(eq(toolExecutions.id, body.meta.trace_id));
    expect(trace).toMatchObject({ status: 'error', errorCode: 'UNKNOWN_ERROR' });
    expect(JSON.stringify(trace!.error)).toContain('secret internal detail');
    expect((trace!.error as { cause: { stack: string } }).cause.stack).toMatch(/Error: secret internal detail/);
  });

  it('refuses to pass on output that breaks the declared schema', async () => {
    const { status, body } = await call('wrong-output', { text: 'x' });
    expect(status).toBe(500);
    expect(body.error.code).toBe('UNKNOWN_ERROR');
    expect(body.error.message).toContain('does not match its declared output');
  });

  it('gives the tool the project of the API key', async () => {
    const { status, body } = await call('echo-project', { text: 'hi' });
    expect(status).toBe(200);
    expect(body.data).toEqual({ project_id: tenantA.projectId, text: 'hi' });
  });
});
