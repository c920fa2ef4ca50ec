/**
 * The same situation gets the same answer on every tool: an id the project does not have is
 * NOT_FOUND naming it (another tenant's ids included), ids match whatever their letter case, and
 * every 429/503 carries Retry-After.
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import { createGateway } from '../../shared/http/app.ts';
import { callTool, tenantA, tenantB } from './helpers.ts';

type Data = Record<string, any>;
let document: Data;

beforeAll(async () => {
  const { body } = await callTool<Data>('add-document', {
    title: 'Tenant A only',
    content: '- [ ] First private task\n- [ ] Second private task',
  });
  if (!body.success) throw new Error(body.message);
  document = body.data;
});

/** Every tool input that names one record, with the field that names it. */
function calls(documentId: string, taskIds: [string, string]): [string, Record<string, unknown>, string, string][] {
  return [
    ['replace-document', { document_id: documentId, title: 'x', content: '- [ ] x' }, 'document', documentId],
    ['delete-document', { document_id: documentId }, 'document', documentId],
    ['embed-tasks', { document_id: documentId }, 'document', documentId],
    ['get-document-context', { task_ids: [taskIds[0]] }, 'task', taskIds[0]],
    ['detect-dependencies', { task_ids: taskIds }, 'task', taskIds[0]],
    ['query-task-graph', { task_id: taskIds[0] }, 'task', taskIds[0]],
    ['cluster-by-similarity', { task_ids: taskIds }, 'task', taskIds[0]],
  ];
}

describe('NOT_FOUND', () => {
  it.each(calls(crypto.randomUUID(), [crypto.randomUUID(), crypto.randomUUID()]))(
    '%s answers an unknown id with NOT_FOUND naming it',
    async (tool, input, entity, id) => {
      const { status, body } = await callTool(tool, input);
      expect(status).toBe(404);
      expect(body).toMatchObject({ success: false, error: { code: 'NOT_FOUND', retryable: false, details: { entity_type: entity } } });
      expect(body.message).toContain(`'${id}'`);
      expect(body.message).toMatch(/^No (document|task)s? with ids? .* exists? in this project\.$/);
    },
  );

  it("answers another tenant's ids exactly like unknown ones, on every tool, and changes nothing", async () => {
    const taskIds: [string, string] = [document.tasks[0].task_id, document.tasks[1].task_id];
    for (const [tool, input, entity] of calls(document.document_id, taskIds)) {
      const { status, body } = await callTool(tool, input, { key: tenantB.apiKey });
      expect(status, tool).toBe(404);
      expect(body, tool).toMatchObject({ error: { code: 'NOT_FOUND', details: { entity_type: entity } } });
    }
    // Tenant A still has its document and both tasks, untouched.
    const { body } = await callTool<Data>('get-document-context', { task_ids: taskIds });
    if (!body.success) throw new Error(body.message);
    expect(body.data.documents[0]).toMatchObject({ title: 'Tenant A only', task_count: 2 });
  });
});

describe('ids in any letter case', () => {
  it('are the same ids on every tool that takes one', async () => {
    const upper = (id: string) => id.toUpperCase();
    const taskIds = document.tasks.map((task: Data) => upper(task.task_id));
    for (const [tool, input] of [
      ['embed-tasks', { document_id: upper(document.document_id) }],
      ['get-document-context', { task_ids: [taskIds[0]] }],
      ['detect-dependencies', { task_ids: taskIds }],
      ['query-task-graph', { task_id: taskIds[0] }],
      ['cluster-by-similarity', { task_ids: taskIds, threshold: 0 }],
      ['semantic-search', { query: 'private task', document_ids: [upper(document.document_id)], threshold: 0 }],
    ] as const) {
      const { status, body } = await callTool(tool, input);
      expect(body.success, `${tool}: ${body.message}`).toBe(true);
      expect(status).toBe(200);
    }
  });
});

describe('Retry-After', () => {
  it('comes with a 503 from the pipeline, matching details.retry_after_ms', async () => {
    const ctx = createExecutionContext();
    const response = await createGateway(tools).fetch(
      new Request('http://edge-tools.test/tools/semantic-search', {
        method: 'POST',
        headers: { authorization: `Bearer ${tenantA.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'anything' }),
      }),
      { ...env, UPSTASH_REDIS_REST_URL: 'http://127.0.0.1:9', UPSTASH_REDIS_REST_TOKEN: 'x' },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    const body = (await response.json()) as { error: { code: string; details: { retry_after_ms: number } } };
    expect(response.status).toBe(503);
    expect(body.error.code).toBe('BUSY');
    expect(response.headers.get('retry-after')).toBe(String(Math.ceil(body.error.details.retry_after_ms / 1000)));
  });
});
