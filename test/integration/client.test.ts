/** The typed client (functions/client.ts) against the gateway in workerd. */
import { describe, expect, it, vi } from 'vitest';
import { createClient } from '../../functions/client.ts';
import { send, tenantA, uniqueTimestamp } from './helpers.ts';

const client = createClient('http://edge-tools.test', {
  apiKey: tenantA.apiKey,
  fetch: (input, init) => send(new Request(input, init)),
});

describe('typed client', () => {
  it('runs a tool and answers its envelope, typed from the registry', async () => {
    const result = await client.callTool('semantic-search', { query: 'hire backend engineers', limit: 3 });
    expect(result).toMatchObject({ success: true, meta: { tool: 'semantic-search' } });
    if (result.success) expect(Array.isArray(result.data.results)).toBe(true);
  });

  it('answers failures as envelopes rather than throwing', async () => {
    const result = await client.callTool('log-mood', {
      user_id: 'user_123',
      mood: 'excited',
      energy_level: 7,
      timestamp: uniqueTimestamp(),
    });
    expect(result).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR' } });
  });

  it('sends an idempotency key: the repeated call is a replay of the first', async () => {
    const input = {
      user_id: `client_${crypto.randomUUID().slice(0, 8)}`,
      mood: 'happy',
      energy_level: 7,
      timestamp: uniqueTimestamp(),
    } as const;
    const idempotencyKey = `a "quoted" \\ key ${crypto.randomUUID()}`;
    const first = await client.callTool('log-mood', input, { idempotencyKey });
    const again = await client.callTool('log-mood', input, { idempotencyKey });
    expect(first.success).toBe(true);
    expect(again).toMatchObject({
      success: true,
      data: first.success ? first.data : {},
      meta: { replayed: true, trace_id: first.meta.trace_id },
    });
  });

  it('reads back executions and metrics, typed', async () => {
    const call = await client.callTool('log-mood', {
      user_id: 'client-observability',
      mood: 'sad',
      energy_level: 3,
      timestamp: uniqueTimestamp(),
    });
    const traceId = call.meta.trace_id;
    // The trace is written after the answer: wait until it is readable.
    const one = await vi.waitFor(async () => {
      const found = await client.execution(traceId);
      if (!found.success) throw new Error(found.message);
      return found;
    });
    expect(one).toMatchObject({ success: true, data: { trace_id: traceId, tool: 'log-mood', input: { user_id: 'client-observability' } } });
    const page = await client.executions({ tool: 'log-mood', limit: 100 });
    if (!page.success) throw new Error(page.message);
    expect(page.data.executions.map((execution) => execution.trace_id)).toContain(traceId);
    const metrics = await client.metrics({ window: '1h', tool: 'log-mood' });
    if (!metrics.success) throw new Error(metrics.message);
    expect(metrics.data.tools[0]?.calls).toBeGreaterThanOrEqual(1);
  });

  it('reads the records links point at', async () => {
    const added = await client.callTool('add-document', { title: 'Client record', content: '- [ ] Read me through the client' });
    if (!added.success) throw new Error(added.message);
    const document = await client.getDocument(added.data.document_id, { response_format: 'detailed' });
    expect(document).toMatchObject({
      success: true,
      data: { document: { title: 'Client record', tasks: [{ text: 'Read me through the client' }] } },
    });
    const task = await client.getTask(added.data.tasks[0]!.task_id);
    expect(task).toMatchObject({ success: true, data: { task: { document_id: added.data.document_id } } });
    expect(await client.getTask(crypto.randomUUID())).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
  });

  it('reaches the other routes through hono/client', async () => {
    const response = await client.api.health.$get();
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ success: true, data: { status: 'ok' } });
  });
});
