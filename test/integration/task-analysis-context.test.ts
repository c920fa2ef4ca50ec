/**
 * get-document-context end to end in workerd: the parent documents with their markdown, tasks and
 * links; long documents read chunk by chunk in SQL (code points, overlapping by 200); chunks and
 * many documents paged through the cursor; task ids in any letter case; NOT_FOUND, another
 * tenant's ids included; and DOCUMENT_DELETED when the document vanishes while the tool runs.
 */
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import getDocumentContext from '../../functions/task-analysis/get-document-context.ts';
import { createProviders, readProviderConfig } from '../../shared/providers/index.ts';
import type { ToolContext } from '../../shared/core/tool.ts';
import { nameBasedUuid } from '../../shared/runtime/ids.ts';
import { db, defaultLinks, tenantB } from './helpers.ts';
import { callsWith, documentsProject, heavy, HIRING, HNSW_LOAD_TIMEOUT_MS, taskId, taskIdsOf, type Data } from './task-analysis-fixture.ts';

let tenant: { projectId: string; apiKey: string };
let hiring: Data;
let infrastructure: Data;
const { call, data } = callsWith(() => tenant.apiKey);

beforeAll(async () => {
  ({ hiring, infrastructure, ...tenant } = await documentsProject('Task analysis: context'));
});

describe('get-document-context', () => {
  it('returns the parent documents with their markdown and their tasks, and links them', async () => {
    const { body } = await call('get-document-context', { task_ids: [taskId(hiring, 1), taskId(infrastructure, 0)] });
    if (!body.success) throw new Error(body.message);
    const context = body.data;
    expect(context.documents.map((d: Data) => d.document_id)).toEqual([hiring.document_id, infrastructure.document_id]);
    const doc = context.documents[0];
    expect(doc).toMatchObject({
      title: 'Hiring plan',
      content: HIRING,
      pagination: { current_chunk: 1, total_chunks: 1, chunk_size: 50_000, overlap: 200, total_characters: HIRING.length },
      task_count: 4,
      chunk_task_count: 4,
      tasks_from: 0,
    });
    expect(doc.tasks.map((t: Data) => t.task_id)).toEqual(hiring.tasks.map((t: Data) => t.task_id));
    expect(context.next_cursor).toBeNull();
    expect(body.meta.truncated).toBe(false);
    expect(body.links).toEqual(
      expect.arrayContaining([
        { label: 'Document: Hiring plan', url: `http://edge-tools.test/documents/${hiring.document_id}` },
        {
          label: expect.stringMatching(/^Task: Interview backend engineer candidates/),
          url: `http://edge-tools.test/tasks/${taskId(hiring, 1)}`,
        },
        { label: 'Document: Infrastructure', url: `http://edge-tools.test/documents/${infrastructure.document_id}` },
      ]),
    );
  });

  it('reads long documents chunk by chunk in SQL (code points, overlapping by exactly 200), each chunk with its own tasks', async () => {
    const filler = 'Background paragraph about the 🚀 launch, ëxactly. '.repeat(2_400); // ~120k code points, emoji included
    const content = `# Launch\n- [ ] Prepare the launch\n${filler}\n- [ ] Announce the launch\n`;
    const doc = await data('add-document', { title: 'Long launch plan', content }, heavy.apiKey);
    const chunks: string[] = [];
    const tasksByChunk: string[][] = [];
    for (let chunk = 1; chunk <= 3; chunk++) {
      const context = await data('get-document-context', { task_ids: [taskId(doc, 0)], chunk_number: chunk }, heavy.apiKey);
      const page = context.documents[0];
      expect(page.pagination).toEqual({
        current_chunk: chunk,
        total_chunks: 3,
        chunk_size: 50_000,
        overlap: 200,
        total_characters: [...content].length,
      });
      expect(page.task_count).toBe(2);
      chunks.push(page.content);
      tasksByChunk.push(page.tasks.map((t: Data) => t.text));
    }
    // Judged by code-point slicing in JS: Postgres' substr must cut the same characters.
    const points = [...content];
    expect(chunks).toEqual([points.slice(0, 50_000), points.slice(49_800, 99_800), points.slice(99_600)].map((part) => part.join('')));
    expect(tasksByChunk).toEqual([['Prepare the launch'], [], ['Announce the launch']]);
    const beyond = await call('get-document-context', { task_ids: [taskId(doc, 0)], chunk_number: 4 }, heavy.apiKey);
    expect(beyond.status).toBe(400);
    expect(beyond.body.message).toContain("'chunk_number' must be between 1 and 3");
    expect(beyond.body.message).toContain("'Long launch plan' has 3 chunks");
    // Past the widest document there can be too: the bound named is this document's, not the schema's.
    const far = await call('get-document-context', { task_ids: [taskId(doc, 0)], chunk_number: 999 }, heavy.apiKey);
    expect(far.status).toBe(400);
    expect(far.body.message).toContain("'chunk_number' must be between 1 and 3");
    expect(far.body.message).toContain("'Long launch plan' has 3 chunks");
  });

  it('answers chunk_number past the end as VALIDATION_ERROR saying how many chunks there are', async () => {
    const { status, body } = await call('get-document-context', { task_ids: [taskId(hiring, 0)], chunk_number: 2 });
    expect(status).toBe(400);
    expect(body).toMatchObject({
      error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: 'chunk_number', expected: 'between 1 and 1' }] } },
    });
    expect(body.message).toBe(
      "Field 'chunk_number' must be between 1 and 1 for these tasks' documents, but received 2: 'Hiring plan' has 1 chunk.",
    );
  });

  it(
    'pages a chunk with more tasks than the budget holds, every task reachable once through the cursor',
    async () => {
      const lines = Array.from({ length: 200 }, (_, i) => `- [ ] Review the quarterly budget line number ${i + 1} with the finance team`);
      const doc = await data('add-document', { title: 'Budget review', content: `# Budget\n${lines.join('\n')}\n` }, heavy.apiKey);
      const all = await taskIdsOf(doc.document_id);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const { body } = await call('get-document-context', { task_ids: [all[5]!], ...(cursor ? { cursor } : {}) }, heavy.apiKey);
        if (!body.success) throw new Error(body.message);
        const [page] = body.data.documents;
        // The content comes once, on the first page; later pages continue the tasks.
        expect(page.content === null).toBe(pages > 0);
        expect(page.tasks_from).toBe(seen.length);
        expect(JSON.stringify(page.tasks).length).toBeLessThanOrEqual(6_000);
        seen.push(...page.tasks.map((t: Data) => t.task_id));
        cursor = body.data.next_cursor;
        expect(body.meta.truncated).toBe(cursor !== null);
        if (cursor) expect(body.message).toContain('cursor');
        pages++;
      } while (cursor && pages < 50);
      expect(pages).toBeGreaterThan(2);
      expect(seen).toEqual(all);
    },
    HNSW_LOAD_TIMEOUT_MS,
  );

  it('pages many documents across answers, and refuses a cursor sent with other task ids', async () => {
    const docs = [];
    for (let i = 0; i < 8; i++) {
      docs.push(
        await data(
          'add-document',
          {
            title: `Plan ${i}`,
            content: `# Plan ${i}\n${'Context sentence for the plan. '.repeat(100)}\n- [ ] Task A of plan ${i}\n- [ ] Task B of plan ${i}\n`,
          },
          heavy.apiKey,
        ),
      );
    }
    const taskIds = docs.map((doc) => taskId(doc, 1));
    const seenDocuments: string[] = [];
    const seenTasks: string[] = [];
    let cursor: string | null = null;
    let first: string | null = null;
    do {
      const answer: Data = await data('get-document-context', { task_ids: taskIds, ...(cursor ? { cursor } : {}) }, heavy.apiKey);
      for (const page of answer.documents) {
        if (page.content !== null) seenDocuments.push(page.document_id);
        seenTasks.push(...page.tasks.map((t: Data) => t.task_id));
      }
      cursor = answer.next_cursor;
      first ??= cursor;
    } while (cursor);
    expect(seenDocuments).toEqual(docs.map((doc) => doc.document_id));
    expect(seenTasks).toEqual(docs.flatMap((doc) => doc.tasks.map((t: Data) => t.task_id)));
    expect(first).not.toBeNull();
    const refused = await call('get-document-context', { task_ids: taskIds.slice(1), cursor: first }, heavy.apiKey);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: 'cursor' }] } } });
  });

  it('matches task ids whatever their letter case', async () => {
    const upper = taskId(hiring, 1).toUpperCase();
    const context = await data('get-document-context', { task_ids: [upper] });
    expect(context.documents[0].document_id).toBe(hiring.document_id);
    const repeated = await call('get-document-context', { task_ids: [upper, taskId(hiring, 1)] });
    expect(repeated.status).toBe(400);
  });

  it("answers NOT_FOUND naming unknown task ids, and treats another tenant's ids the same way", async () => {
    const unknown = crypto.randomUUID();
    const { status, body } = await call('get-document-context', { task_ids: [taskId(hiring, 0), unknown] });
    expect(status).toBe(404);
    expect(body).toMatchObject({ error: { code: 'NOT_FOUND', details: { entity_type: 'task', query: { task_ids: [unknown] } } } });
    expect(body.message).toContain(unknown);
    const foreign = await call('get-document-context', { task_ids: [taskId(hiring, 0)] }, tenantB.apiKey);
    expect(foreign.status).toBe(404);
    expect(foreign.body.message).toBe(`No task with id '${taskId(hiring, 0)}' exists in this project.`);
  });

  it('answers DOCUMENT_DELETED when the document vanishes while the tool runs, without retrying', async () => {
    const doc = await data('add-document', { title: 'Vanishing', content: '- [ ] Soon gone' });
    // The real tool on the real database, with the document deleted between its two reads.
    let deleted = false;
    const vanishingDb = new Proxy(db, {
      get(target, property, receiver) {
        if (property === 'batch' && !deleted) {
          return async (...args: unknown[]) => {
            deleted = true;
            await target.execute(sql`delete from documents where id = ${doc.document_id}`);
            return (target.batch as (...a: unknown[]) => unknown)(...args);
          };
        }
        return Reflect.get(target, property, receiver);
      },
    });
    const config = readProviderConfig({});
    if (!config.ok) throw new Error('offline providers need no configuration');
    const context: ToolContext = {
      db: vanishingDb,
      project: { id: tenant.projectId, name: 'Task analysis: context' },
      providers: createProviders(config.config),
      signal: new AbortController().signal,
      traceId: 'test',
      idFor: (purpose) => nameBasedUuid(`test:${purpose}`),
      links: defaultLinks,
      progress: () => {},
    };
    const outcome = await getDocumentContext.execute(getDocumentContext.input.parse({ task_ids: [taskId(doc, 0)] }), context);
    expect(deleted).toBe(true);
    expect(outcome).toMatchObject({
      ok: false,
      error: { code: 'DOCUMENT_DELETED', retryable: false, message: `Document ${doc.document_id} was deleted during execution.` },
    });
    const { isTransient } = await import('../../shared/runtime/retry.ts');
    if (!outcome.ok) expect(isTransient(outcome)).toBe(false);
  });
});
