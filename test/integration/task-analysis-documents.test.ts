/**
 * Documents into the task-analysis toolset, end to end in workerd on the local Neon stand-in with
 * the offline providers: checkbox tasks extracted in order and embedded, a long document's answer
 * within its budget, failed embeddings recorded and embedded later by embed-tasks, and a document
 * replaced or deleted with its tasks and relationships.
 */
import { env } from 'cloudflare:workers';
import { eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { taskRelationships, tasks as tasksTable } from '../../drizzle/schema.ts';
import { db } from './helpers.ts';
import { callsWith, documentsProject, heavy, HNSW_LOAD_TIMEOUT_MS, type Data } from './task-analysis-fixture.ts';

let tenant: { projectId: string; apiKey: string };
let hiring: Data;
const { call, data } = callsWith(() => tenant.apiKey);

beforeAll(async () => {
  ({ hiring, ...tenant } = await documentsProject('Task analysis: documents'));
});

describe('documents in', () => {
  it('extracts the checkbox tasks in order and embeds them', async () => {
    expect(hiring).toMatchObject({ task_count: 4, embedded_count: 4, failed_count: 0, embedding_model: 'offline-hashing-v2' });
    expect(hiring.tasks[0]).toEqual({ task_id: expect.any(String), text: 'Open the senior backend engineer role' });
    const content = '# Offsites\n- [ ] Book the offsite venue\n  - [ ] Plan the offsite agenda\n\n- [ ] Send the offsite invitations\n';
    const detailed = await data('add-document', { title: 'Offsites', content, response_format: 'detailed' }, heavy.apiKey);
    expect(detailed.tasks.map((t: Data) => t.position)).toEqual([0, 1, 2]);
    expect(detailed.tasks.map((t: Data) => content.slice(t.content_offset).split('\n')[0]!.trim())).toEqual(
      detailed.tasks.map((t: Data) => `- [ ] ${t.text}`),
    );
  });

  it(
    'lists the first tasks of a long document within the budget, and links the document for the rest',
    async () => {
      const content = Array.from(
        { length: 150 },
        (_, i) => `- [ ] Label the archive box number ${i + 1} in the basement storage room`,
      ).join('\n');
      const { body } = await call('add-document', { title: 'Archive boxes', content }, heavy.apiKey);
      if (!body.success) throw new Error(body.message);
      expect(body.data.task_count).toBe(150);
      expect(body.data.tasks.length).toBeGreaterThan(10);
      expect(body.data.tasks.length).toBeLessThan(150);
      expect(JSON.stringify(body.data.tasks).length).toBeLessThanOrEqual(6_000);
      expect(body.meta.truncated).toBe(true);
      expect(body.message).toContain(`The first ${body.data.tasks.length} are listed`);
      expect(body.links).toEqual([{ label: 'Document: Archive boxes', url: `http://edge-tools.test/documents/${body.data.document_id}` }]);
    },
    HNSW_LOAD_TIMEOUT_MS,
  );

  it('records failed embeddings, keeps the document, and embeds them later with embed-tasks', async () => {
    const { createGateway } = await import('../../shared/http/app.ts');
    const { tools } = await import('../../functions/registry.ts');
    const { createExecutionContext, waitOnExecutionContext } = await import('cloudflare:test');
    // An embeddings provider that cannot be reached: every batch fails, the document is stored.
    const brokenEnv = { ...env, EMBEDDINGS_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' };
    const ctx = createExecutionContext();
    const response = await createGateway(tools, { retryDelayMs: 10 }).fetch(
      new Request('http://edge-tools.test/tools/add-document', {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'Unembedded', content: '- [ ] Write the unembedded task\n- [ ] Another unembedded task' }),
      }),
      brokenEnv,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    const added = (await response.json()) as { data: Data; message: string };
    expect(added.data).toMatchObject({ task_count: 2, embedded_count: 0, failed_count: 2 });
    expect(added.message).toContain('call embed-tasks later');
    const [failed] = await db.select().from(tasksTable).where(eq(tasksTable.id, added.data.tasks[0].task_id));
    expect(failed).toMatchObject({ embeddingStatus: 'failed' });
    expect(failed!.embeddingError).toBeTruthy();

    // Not searchable while failed ...
    const before = await data('semantic-search', { query: 'Write the unembedded task', threshold: 0.5 });
    expect(before.results.map((r: Data) => r.task_id)).not.toContain(added.data.tasks[0].task_id);
    expect(before.unembedded_task_count).toBeGreaterThanOrEqual(2);
    // ... and searchable once embed-tasks has run with a working provider.
    const retried = await data('embed-tasks', { document_id: added.data.document_id });
    expect(retried).toMatchObject({ embedded_count: 2, failed_count: 0, remaining_count: 0 });
    const after = await data('semantic-search', { query: 'Write the unembedded task', threshold: 0.5 });
    expect(after.results[0].task_id).toBe(added.data.tasks[0].task_id);
  });

  it('replaces a document: new tasks, old tasks and their relationships gone', async () => {
    const doc = await data('add-document', { title: 'To replace', content: '- [ ] Old task one\n- [ ] Old task two after old task one' });
    await data('detect-dependencies', { task_ids: doc.tasks.map((t: Data) => t.task_id) });
    const replaced = await data('replace-document', { document_id: doc.document_id, title: 'Replaced', content: '- [ ] New task' });
    expect(replaced).toMatchObject({ document_id: doc.document_id, title: 'Replaced', task_count: 1 });
    const old = await call('get-document-context', { task_ids: [doc.tasks[0].task_id] });
    expect(old.status).toBe(404);
    const edges = await db.select().from(taskRelationships).where(eq(taskRelationships.sourceTaskId, doc.tasks[1].task_id));
    expect(edges).toHaveLength(0);
  });

  it('deletes a document with its tasks and relationships', async () => {
    const doc = await data('add-document', {
      title: 'To delete',
      content: '- [ ] Draft the memo\n- [ ] Send the memo after draft the memo',
    });
    await data('detect-dependencies', { task_ids: doc.tasks.map((t: Data) => t.task_id) });
    expect(await data('delete-document', { document_id: doc.document_id })).toEqual({
      document_id: doc.document_id,
      deleted_task_count: 2,
    });
    const { rows } = await db.execute(
      sql`select count(*)::int as n from task_relationships where source_task_id = ${doc.tasks[1].task_id} or target_task_id = ${doc.tasks[1].task_id}`,
    );
    expect(rows[0]).toEqual({ n: 0 });
    expect((await call('delete-document', { document_id: doc.document_id })).status).toBe(404);
  });
});
