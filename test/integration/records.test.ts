/**
 * The read routes for records (`GET /documents/:id`, `GET /tasks/:id`) and the links that point at
 * them: authenticated, tenant-scoped, bounded, and every link an answer carries leads somewhere.
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import type { Link, ToolResult } from '../../shared/core/contract.ts';
import { createGateway } from '../../shared/http/app.ts';
import { sql } from 'drizzle-orm';
import { callTool, db, send, tenantA, tenantB, tenantC } from './helpers.ts';

type Data = Record<string, any>;

async function get(url: string, key: string | null = tenantA.apiKey) {
  const response = await send(
    new Request(url.startsWith('http') ? url : `http://edge-tools.test${url}`, { headers: key ? { authorization: `Bearer ${key}` } : {} }),
  );
  return { status: response.status, headers: response.headers, body: (await response.json()) as ToolResult<Data> };
}

async function added(title: string, content: string, key = tenantA.apiKey): Promise<Data> {
  const { body } = await callTool<Data>('add-document', { title, content }, { key });
  if (!body.success) throw new Error(body.message);
  return body.data;
}

describe('GET /documents/:id', () => {
  it("answers the tenant's document: a chunk with its tasks, in the envelope, with links", async () => {
    const doc = await added('Record plan', '# Record plan\n- [ ] Write the record route\n- [ ] Link answers to it\n');
    const { status, body } = await get(`/documents/${doc.document_id}`);
    expect(status).toBe(200);
    if (!body.success) throw new Error(body.message);
    expect(body.data.document).toMatchObject({
      document_id: doc.document_id,
      title: 'Record plan',
      content: '# Record plan\n- [ ] Write the record route\n- [ ] Link answers to it\n',
      task_count: 2,
      tasks: [{ task_id: doc.tasks[0].task_id, text: 'Write the record route', position: 0 }, { text: 'Link answers to it' }],
    });
    expect(body.data.next_cursor).toBeNull();
    expect(body.meta).toMatchObject({ tool: 'documents', attempts: 0 });
    expect(body.links?.[0]).toEqual({ label: 'Document: Record plan', url: `http://edge-tools.test/documents/${doc.document_id}` });
  });

  it("answers another tenant's document exactly like one that never existed", async () => {
    const doc = await added('Private plan', '- [ ] Keep this private');
    expect((await get(`/documents/${doc.document_id}`)).status).toBe(200);
    const foreign = await get(`/documents/${doc.document_id}`, tenantB.apiKey);
    const unknownId = crypto.randomUUID();
    const unknown = await get(`/documents/${unknownId}`, tenantB.apiKey);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ success: false, error: { code: 'NOT_FOUND', details: { entity_type: 'document' } } });
    expect(foreign.body.message.replace(doc.document_id, 'ID')).toBe(unknown.body.message.replace(unknownId, 'ID'));
    expect(JSON.stringify(foreign.body)).not.toContain('Private plan');
  });

  it('refuses calls without a key, bad ids, unknown parameters and chunks past the end', async () => {
    const doc = await added('Short plan', '- [ ] Only task');
    const anonymous = await get(`/documents/${doc.document_id}`, null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain('Bearer');
    expect((await get('/documents/not-a-uuid')).body).toMatchObject({
      error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: 'id' }] } },
    });
    expect((await get(`/documents/${doc.document_id}?colour=blue`)).body).toMatchObject({
      error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: 'colour', code: 'unknown_field' }] } },
    });
    const beyond = await get(`/documents/${doc.document_id}?chunk=2`);
    expect(beyond.status).toBe(400);
    expect(beyond.body.message).toContain('between 1 and 1 for this document (it has 1 chunk)');
  });

  it('pages the tasks of a long chunk, and links the next page', async () => {
    const tenant = tenantC;
    const lines = Array.from({ length: 150 }, (_, i) => `- [ ] Check the inventory of warehouse shelf number ${i + 1} before the audit`);
    const doc = await added('Inventory', lines.join('\n'), tenant.apiKey);
    const seen: string[] = [];
    let url: string | undefined = `/documents/${doc.document_id.toUpperCase()}`;
    let pages = 0;
    while (url && pages < 30) {
      const { body } = await get(url, tenant.apiKey);
      if (!body.success) throw new Error(body.message);
      seen.push(...body.data.document.tasks.map((task: Data) => task.task_id));
      url = body.links?.find((link) => link.label === 'Next page of tasks')?.url;
      expect(url === undefined).toBe(body.data.next_cursor === null);
      pages++;
    }
    expect(pages).toBeGreaterThan(1);
    const { rows } = await db.execute(sql`select id from tasks where document_id = ${doc.document_id} order by position`);
    expect(seen).toEqual(rows.map((row) => String(row.id)));
  });
});

describe('GET /tasks/:id', () => {
  it('answers the task with its document, whatever the letter case of the id', async () => {
    const doc = await added('Task record plan', '# Plan\n- [ ] Draft the memo\n- [ ] Send the memo after draft the memo');
    await callTool('detect-dependencies', { task_ids: doc.tasks.map((task: Data) => task.task_id) });
    const id = doc.tasks[1].task_id;
    const { status, body } = await get(`/tasks/${id.toUpperCase()}?response_format=detailed`);
    expect(status).toBe(200);
    if (!body.success) throw new Error(body.message);
    expect(body.data.task).toMatchObject({
      task_id: id,
      text: 'Send the memo after draft the memo',
      position: 1,
      document_id: doc.document_id,
      document_title: 'Task record plan',
      chunk_number: 1,
      embedding_status: 'completed',
      relationship_count: { outgoing: 0, incoming: 1 },
      embedding_model: 'offline-hashing-v2',
    });
    expect(body.links?.map((link) => link.url)).toEqual([
      `http://edge-tools.test/tasks/${id}`,
      `http://edge-tools.test/documents/${doc.document_id}`,
    ]);
    expect((await get(`/tasks/${id}`, tenantB.apiKey)).body).toMatchObject({
      error: { code: 'NOT_FOUND', details: { entity_type: 'task', query: { task_id: id } } },
    });
  });
});

describe('links', () => {
  it('lead to a record for every link any tool answer carries', async () => {
    const doc = await added(
      'Linked plan',
      '# Linked plan\n- [ ] Hire two backend engineers\n- [ ] Onboard the backend engineers after we hire two backend engineers\n',
    );
    const ids = doc.tasks.map((task: Data) => task.task_id);
    const calls: [string, unknown][] = [
      ['semantic-search', { query: 'hire backend engineers', threshold: 0.2 }],
      ['get-document-context', { task_ids: ids }],
      ['detect-dependencies', { task_ids: ids }],
      ['query-task-graph', { task_id: ids[0] }],
      ['cluster-by-similarity', { task_ids: ids, threshold: 0 }],
      ['replace-document', { document_id: doc.document_id, title: 'Linked plan', content: '- [ ] Hire two backend engineers' }],
    ];
    let followed = 0;
    for (const [tool, input] of calls) {
      const { body } = await callTool<Data>(tool, input);
      if (!body.success) throw new Error(`${tool}: ${body.message}`);
      expect(body.links?.length, tool).toBeGreaterThan(0);
      for (const link of body.links ?? []) {
        const target = await get(link.url);
        expect(target.status, `${tool} -> ${link.url}`).toBe(200);
        followed++;
      }
    }
    expect(followed).toBeGreaterThan(calls.length);
  });

  it("follow the deployment's URL templates, and a broken template stops the call before it runs", async () => {
    const doc = await added('Templated plan', '- [ ] Use the template');
    const gatewayWith = async (vars: Record<string, string>, tool: string, input: unknown) => {
      const ctx = createExecutionContext();
      const response = await createGateway(tools).fetch(
        new Request(`http://edge-tools.test/tools/${tool}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${tenantA.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify(input),
        }),
        { ...env, ...vars },
        ctx,
      );
      await waitOnExecutionContext(ctx);
      return (await response.json()) as ToolResult<Data> & { links?: Link[] };
    };
    const templated = await gatewayWith(
      { DOCUMENT_URL_TEMPLATE: 'https://app.example.com/docs/{id}', TASK_URL_TEMPLATE: 'https://app.example.com/tasks/{id}' },
      'get-document-context',
      { task_ids: [doc.tasks[0].task_id] },
    );
    expect(templated.links).toEqual([
      { label: 'Document: Templated plan', url: `https://app.example.com/docs/${doc.document_id}` },
      { label: 'Task: Use the template', url: `https://app.example.com/tasks/${doc.tasks[0].task_id}` },
    ]);
    const broken = await gatewayWith({ DOCUMENT_URL_TEMPLATE: 'app.example.com/docs' }, 'add-document', {
      title: 'Never stored',
      content: '- [ ] x',
    });
    expect(broken).toMatchObject({
      success: false,
      error: { code: 'CONFIG_ERROR', details: { variable: 'DOCUMENT_URL_TEMPLATE' } },
      meta: { attempts: 0 },
    });
  });
});
