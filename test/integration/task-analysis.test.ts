/**
 * The task-analysis toolset end to end in workerd, on the local Neon stand-in with the offline
 * providers: documents in, then the five agent tools, through the gateway as an agent calls them.
 * The acceptance scenarios, and the edge cases: no results, a giant single cluster, circular
 * dependencies, tasks without embeddings, a document deleted mid-execution, pagination.
 */
import { env } from 'cloudflare:workers';
import { eq, inArray, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { taskRelationships, tasks as tasksTable } from '../../drizzle/schema.ts';
import { parseVector } from '../support/vectors.ts';
import getDocumentContext from '../../functions/task-analysis/get-document-context.ts';
import { embedText } from '../../shared/providers/hashing-embedder.ts';
import { createProviders, readProviderConfig } from '../../shared/providers/index.ts';
import type { ToolContext } from '../../shared/core/tool.ts';
import { nameBasedUuid } from '../../shared/runtime/ids.ts';
import { callTool, db, defaultLinks, tenantA, tenantB, tenantC } from './helpers.ts';

type Data = Record<string, any>;
const call = async (toolId: string, input: unknown, key = tenantA.apiKey) => callTool<Data>(toolId, input, { key });
async function data(toolId: string, input: unknown, key = tenantA.apiKey): Promise<Data> {
  const { status, body } = await call(toolId, input, key);
  if (!body.success) throw new Error(`${toolId} failed with ${status}: ${body.message}`);
  return body.data;
}

const HIRING = `# Hiring plan
We need to grow the platform team this quarter.
- [ ] Open the senior backend engineer role
- [ ] Interview backend engineer candidates after the senior backend engineer role is open
- [ ] Hire two backend engineers
- [ ] Onboard the new backend engineers
`;
const INFRASTRUCTURE = `# Infrastructure
- [ ] Migrate the Postgres database to the new cluster
- [ ] Set up database replication and backups
- [ ] Load test the database cluster
`;
const COMPLIANCE = `# Compliance
- [ ] Renew the SOC 2 audit with the auditor
- [ ] Collect SOC 2 audit evidence for access reviews
`;

let hiring: Data;
let infrastructure: Data;
let compliance: Data;
/** Tests that load many similar tasks do it in tenant C, so searches over tenant A never rank them. */
const heavy = tenantC;
/**
 * Documents of hundreds of tasks: every embedded task also enters the HNSW search index, which the
 * stand-in's pgvector (WASM, one thread) builds at about 100 tasks/s.
 */
const HNSW_LOAD_TIMEOUT_MS = 30_000;

/** Every task id of a document, in order (answers list the first ones only). */
async function taskIdsOf(documentId: string): Promise<string[]> {
  const { rows } = await db.execute(sql`select id from tasks where document_id = ${documentId} order by position`);
  return rows.map((row) => String(row.id));
}
const taskId = (document: Data, position: number): string => document.tasks[position].task_id;

beforeAll(async () => {
  hiring = await data('add-document', { title: 'Hiring plan', content: HIRING });
  infrastructure = await data('add-document', { title: 'Infrastructure', content: INFRASTRUCTURE });
  compliance = await data('add-document', { title: 'Compliance', content: COMPLIANCE });
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
        headers: { authorization: `Bearer ${tenantA.apiKey}`, 'content-type': 'application/json' },
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

describe('semantic-search', () => {
  it('finds the tasks closest in meaning, best first, with their documents', async () => {
    const found = await data('semantic-search', { query: 'hire backend engineers', threshold: 0.3, limit: 5 });
    expect(found.results.length).toBeGreaterThan(0);
    expect(found.results[0]).toMatchObject({ document_id: hiring.document_id, document_title: 'Hiring plan' });
    const similarities = found.results.map((r: Data) => r.similarity);
    expect(similarities).toEqual([...similarities].sort((a, b) => b - a));
    for (const s of similarities) expect(s).toBeGreaterThanOrEqual(0.3);
    expect(Object.keys(found.results[0]).sort()).toEqual(['document_id', 'document_title', 'similarity', 'task_id', 'text']);
  });

  it('answers zero results as a success with an explanation and a suggestion', async () => {
    const { status, body } = await call('semantic-search', { query: 'quantum chromodynamics lattice', threshold: 0.95 });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, data: { results: [] } });
    if (body.success) {
      expect(body.data.suggestion).toMatch(/rephrase the query/);
      expect(body.message).toMatch(/No task in this project (reaches the threshold 0.95|is similar to)/);
    }
  });

  it('searches only the documents asked for', async () => {
    const found = await data('semantic-search', { query: 'database', threshold: 0, document_ids: [compliance.document_id] });
    expect(new Set(found.results.map((r: Data) => r.document_id))).toEqual(new Set([compliance.document_id]));
  });

  it('never shows another tenant its tasks', async () => {
    const found = await data('semantic-search', { query: 'hire backend engineers', threshold: 0 }, tenantB.apiKey);
    const ids = found.results.map((r: Data) => r.task_id);
    expect(ids).not.toContain(taskId(hiring, 2));
  });

  it('is exact: the same ranking as an independent computation over every embedded task', async () => {
    const query = 'database cluster';
    const found = await data('semantic-search', { query, threshold: 0, limit: 50 });
    // Independently: every embedded task's vector, scored in JS against the query's vector.
    const q = embedText(query);
    const { rows } = await db.execute(
      sql`select id, embedding::text as embedding from tasks where project_id = ${tenantA.projectId} and embedding_status = 'completed'`,
    );
    const expected = (rows as { id: string; embedding: string }[])
      .map((row) => ({ id: row.id, similarity: parseVector(row.embedding).reduce((sum, v, i) => sum + v * q[i]!, 0) }))
      .filter((row) => row.similarity >= 0)
      .sort((a, b) => b.similarity - a.similarity || (a.id < b.id ? -1 : 1))
      .slice(0, 50);
    expect(found.results.map((r: Data) => r.task_id)).toEqual(expected.map((row) => row.id));
  });
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
      project: { id: tenantA.projectId, name: 'Tenant A' },
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

describe('detect-dependencies and query-task-graph', () => {
  it('detects the explicit "after" wording, labels the method, and saves the edges idempotently', async () => {
    const ids = hiring.tasks.map((t: Data) => t.task_id);
    const first = await data('detect-dependencies', { task_ids: ids, response_format: 'detailed' });
    expect(first.detection_method).toBe('offline-heuristic-v1');
    const edge = first.relationships.find(
      (r: Data) => r.type === 'prerequisite' && r.source_task_id === ids[0] && r.target_task_id === ids[1],
    );
    expect(edge).toBeTruthy();
    expect(edge.rationale).toMatch(/after/i);
    const count = async () =>
      (
        (
          await db.execute(
            sql`select count(*)::int as n from task_relationships where project_id = ${tenantA.projectId} and source_task_id = any(${sql.param(ids)}::uuid[])`,
          )
        ).rows[0] as { n: number }
      ).n;
    const saved = await count();
    expect(saved).toBe(first.relationships.length);
    await data('detect-dependencies', { task_ids: ids });
    expect(await count()).toBe(saved);
  });

  it('returns circular dependencies as found', async () => {
    const doc = await data('add-document', {
      title: 'Circular',
      content:
        '- [ ] Ship the mobile app after the payment flow is approved\n- [ ] Approve the payment flow after the mobile app is shipped\n',
    });
    const found = await data('detect-dependencies', { task_ids: doc.tasks.map((t: Data) => t.task_id) });
    const ids = doc.tasks.map((t: Data) => t.task_id);
    expect(found.cycle_groups).toEqual([[...ids].sort()]);
    expect(found.cycles).toHaveLength(1);
    expect(new Set(found.cycles[0])).toEqual(new Set(ids));
  });

  it('walks relationships transitively by depth and direction, ending on cycles', async () => {
    const doc = await data('add-document', {
      title: 'Chain',
      content: [
        '- [ ] Design the invoice schema',
        '- [ ] Implement the payment gateway after the invoice schema is designed',
        '- [ ] Run the acceptance tests after the payment gateway is implemented',
        '- [ ] Launch the billing product after the acceptance tests pass',
      ].join('\n'),
    });
    const ids: string[] = doc.tasks.map((t: Data) => t.task_id);
    await data('detect-dependencies', { task_ids: ids });
    const one = await data('query-task-graph', { task_id: ids[0], relationship_type: 'prerequisite', direction: 'outgoing', depth: 1 });
    expect(one.tasks.map((t: Data) => t.task_id)).toEqual([ids[1]]);
    const three = await data('query-task-graph', { task_id: ids[0], relationship_type: 'prerequisite', direction: 'outgoing', depth: 3 });
    expect(three.tasks.map((t: Data) => [t.task_id, t.depth])).toEqual([
      [ids[1], 1],
      [ids[2], 2],
      [ids[3], 3],
    ]);
    const back = await data('query-task-graph', { task_id: ids[3], relationship_type: 'prerequisite', direction: 'incoming', depth: 10 });
    expect(new Set(back.tasks.map((t: Data) => t.task_id))).toEqual(new Set(ids.slice(0, 3)));
    const none = await call('query-task-graph', { task_id: ids[0], relationship_type: 'prerequisite', direction: 'incoming', depth: 2 });
    if (!none.body.success) throw new Error(none.body.message);
    expect(none.body.data.relationships).toEqual([]);
    // The task has relationships, only not of that direction: the answer says so, and how to see them.
    expect(none.body.message).toMatch(
      /^No saved relationships of type prerequisite, incoming reach this task, but it has others \(.*prerequisite: 1 outgoing, 0 incoming.*\)\. Call again with relationship_type 'all' and direction 'both'/,
    );
    expect(none.body.message).not.toContain('Run detect-dependencies');

    const cycle = await data('add-document', {
      title: 'Loop',
      content:
        '- [ ] Ship the mobile app after the payment flow is approved\n- [ ] Approve the payment flow after the mobile app is shipped\n',
    });
    const loopIds = cycle.tasks.map((t: Data) => t.task_id);
    await data('detect-dependencies', { task_ids: loopIds });
    const loop = await data('query-task-graph', { task_id: loopIds[0], depth: 10 });
    expect(loop.tasks.map((t: Data) => t.task_id)).toEqual([loopIds[1]]);
  });
});

describe('detect-dependencies pages', () => {
  it('answers concisely without rationales, and pages the rest as saved, each relationship once', async () => {
    const lines = Array.from({ length: 20 }, (_, i) => `- [ ] Review the quarterly budget line ${i + 1} with the finance team`);
    const doc = await data('add-document', { title: 'Budget lines', content: lines.join('\n') }, heavy.apiKey);
    const ids: string[] = doc.tasks.map((t: Data) => t.task_id);
    const first = await call('detect-dependencies', { task_ids: ids }, heavy.apiKey);
    if (!first.body.success) throw new Error(first.body.message);
    expect(first.body.data.relationship_count).toBeGreaterThan(100);
    expect(first.body.data.relationships[0]).not.toHaveProperty('rationale');
    expect(first.body.meta.truncated).toBe(true);
    expect(first.body.message).toContain('next_cursor');

    const seen = [...first.body.data.relationships];
    let cursor = first.body.data.next_cursor as string | null;
    let pages = 1;
    while (cursor && pages < 40) {
      const page = await data('detect-dependencies', { task_ids: ids, cursor }, heavy.apiKey);
      expect(JSON.stringify(page.relationships).length).toBeLessThanOrEqual(6_000);
      expect(page).not.toHaveProperty('cycles');
      seen.push(...page.relationships);
      cursor = page.next_cursor;
      pages++;
    }
    const key = (r: Data) => `${r.source_task_id}>${r.target_task_id}:${r.type}`;
    const { rows } = await db.execute(sql`select source_task_id, target_task_id, type from task_relationships
      where project_id = ${heavy.projectId} and source_task_id = any(${sql.param(ids)}::uuid[])`);
    expect(seen.map(key).sort()).toEqual((rows as Data[]).map(key).sort());
    expect(new Set(seen.map(key)).size).toBe(seen.length);
    const confidences = seen.map((r) => r.confidence);
    expect(confidences).toEqual([...confidences].sort((a, b) => b - a));

    const detailed = await data('detect-dependencies', { task_ids: ids.slice(0, 3), response_format: 'detailed' }, heavy.apiKey);
    for (const relationship of detailed.relationships) expect(relationship.rationale).toEqual(expect.any(String));
  });
});

describe('query-task-graph pages', () => {
  it('pages many relationships within the budget, each exactly once, with the tasks each page names', async () => {
    const lines = [
      '- [ ] Kick off the migration project',
      ...Array.from({ length: 120 }, (_, i) => `- [ ] Migrate service number ${i + 1} of the platform`),
    ];
    const doc = await data('add-document', { title: 'Star', content: lines.join('\n') }, heavy.apiKey);
    const [hub, ...spokes] = await taskIdsOf(doc.document_id);
    const rows = JSON.stringify(spokes.map((spoke, i) => ({ source: hub, target: spoke, confidence: 0.5 + (i % 10) / 100 })));
    await db.execute(sql`insert into task_relationships (project_id, source_task_id, target_task_id, type, confidence, detection_method, rationale)
      select ${heavy.projectId}::uuid, r.source, r.target, 'prerequisite', r.confidence, 'test', 'the hub comes first'
      from jsonb_to_recordset(${rows}::jsonb) as r(source uuid, target uuid, confidence real)`);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const { body } = await call('query-task-graph', { task_id: hub, direction: 'outgoing', ...(cursor ? { cursor } : {}) }, heavy.apiKey);
      if (!body.success) throw new Error(body.message);
      const page = body.data;
      expect(page).toMatchObject({ task_count: 120, relationship_count: 120 });
      expect(JSON.stringify(page.relationships).length + JSON.stringify(page.tasks).length).toBeLessThanOrEqual(6_000);
      for (const relationship of page.relationships) {
        expect(relationship).not.toHaveProperty('rationale');
        expect(page.tasks.map((t: Data) => t.task_id)).toContain(relationship.target_task_id);
      }
      seen.push(...page.relationships.map((r: Data) => r.target_task_id));
      cursor = page.next_cursor;
      expect(body.meta.truncated).toBe(cursor !== null);
      pages++;
    } while (cursor && pages < 40);
    expect(pages).toBeGreaterThan(1);
    expect(seen).toHaveLength(120);
    expect(new Set(seen)).toEqual(new Set(spokes));

    // incoming from a spoke: what it depends on, the hub; detailed adds the rationale.
    const back = await data('query-task-graph', { task_id: spokes[7], direction: 'incoming', response_format: 'detailed' }, heavy.apiKey);
    expect(back.relationships).toEqual([
      expect.objectContaining({
        source_task_id: hub,
        target_task_id: spokes[7],
        rationale: 'the hub comes first',
        detection_method: 'test',
      }),
    ]);
    expect(back.tasks).toEqual([expect.objectContaining({ task_id: hub, depth: 1, document_id: doc.document_id })]);
  });
});

describe('cluster-by-similarity', () => {
  const allIds = () => [...hiring.tasks, ...infrastructure.tasks, ...compliance.tasks].map((t: Data) => t.task_id);

  it('groups tasks by theme, with a summary, members in the detailed format', async () => {
    const result = await data('cluster-by-similarity', { task_ids: allIds(), threshold: 0.2, response_format: 'detailed' });
    const clusterOf = (id: string) => result.clusters.find((c: Data) => c.task_ids.includes(id)).cluster_id;
    expect(clusterOf(taskId(compliance, 0))).toBe(clusterOf(taskId(compliance, 1)));
    expect(clusterOf(taskId(compliance, 0))).not.toBe(clusterOf(taskId(hiring, 2)));
    const sizes = result.clusters.map((c: Data) => c.size);
    expect(result.summary).toEqual({
      task_count: allIds().length,
      cluster_count: result.clusters.length,
      largest_cluster_size: Math.max(...sizes),
      singleton_count: sizes.filter((s: number) => s === 1).length,
    });
    expect(sizes.reduce((a: number, b: number) => a + b, 0)).toBe(allIds().length);
    for (const cluster of result.clusters) expect(cluster.task_ids).toHaveLength(cluster.size);
  });

  it('answers concisely with sizes and a few representative tasks, no member lists', async () => {
    const { body } = await call('cluster-by-similarity', { task_ids: allIds(), threshold: 0.2 });
    if (!body.success) throw new Error(body.message);
    for (const cluster of body.data.clusters) {
      expect(cluster).not.toHaveProperty('task_ids');
      expect(cluster.representative_tasks.length).toBe(Math.min(3, cluster.size));
      for (const task of cluster.representative_tasks) expect(allIds()).toContain(task.task_id);
    }
    expect(body.links!.length).toBeGreaterThan(0);
  });

  it('makes one giant cluster at threshold 0 (with a hint to raise it) and singletons at threshold 1 (mean similarity null)', async () => {
    const { body: giant } = await call('cluster-by-similarity', { task_ids: allIds(), threshold: 0, linkage: 'single' });
    if (!giant.success) throw new Error(giant.message);
    expect(giant.data.summary).toMatchObject({ cluster_count: 1, largest_cluster_size: allIds().length });
    expect(giant.data.suggestion).toMatch(/raise the threshold to 0\.\d+/);
    // Following the hint splits the giant cluster.
    const raised = Number(/raise the threshold to ([\d.]+)/.exec(giant.data.suggestion)![1]);
    const split = await data('cluster-by-similarity', { task_ids: allIds(), threshold: raised, linkage: 'single' });
    expect(split.summary.cluster_count).toBeGreaterThan(1);

    const apart = await data('cluster-by-similarity', { task_ids: allIds(), threshold: 1, linkage: 'complete' });
    expect(apart.summary).toMatchObject({ cluster_count: allIds().length, singleton_count: allIds().length });
    for (const cluster of apart.clusters) expect(cluster.mean_similarity).toBeNull();
    expect(apart.suggestion).toMatch(/Lower the threshold/);
  });

  it('pages the members and the whole merge tree in the detailed format', async () => {
    const members: string[] = [];
    const merges: Data[] = [];
    let cursor: string | null = null;
    do {
      const page: Data = await data('cluster-by-similarity', {
        task_ids: allIds(),
        threshold: 0.5,
        response_format: 'detailed',
        ...(cursor ? { cursor } : {}),
      });
      for (const cluster of page.clusters) members.push(...cluster.task_ids);
      merges.push(...(page.merges ?? []));
      cursor = page.next_cursor;
    } while (cursor);
    expect(members.sort()).toEqual([...allIds()].sort());
    expect(merges.map((m) => m.merge)).toEqual(Array.from({ length: allIds().length - 1 }, (_, i) => i + 1));
    // Every merge joins tasks or earlier merges, and the last one joins everything.
    for (const merge of merges) {
      for (const side of [merge.left, merge.right]) {
        if (side.startsWith('merge ')) expect(Number(side.slice(6))).toBeLessThan(merge.merge);
        else expect(allIds()).toContain(side);
      }
    }
    expect(merges.at(-1)!.size).toBe(allIds().length);
  });

  it('leaves out tasks whose embedding is a zero vector, instead of scoring it', async () => {
    // A provider may embed a text with nothing to embed as the zero vector, which has no direction.
    const noise = await data('add-document', { title: 'Noise', content: '- [ ] the\n- [ ] ???\n- [ ] 🙂' });
    const noiseIds: string[] = noise.tasks.map((t: Data) => t.task_id);
    await db
      .update(tasksTable)
      .set({ embedding: Array.from({ length: 1536 }, () => 0) })
      .where(inArray(tasksTable.id, noiseIds));
    const { status, body } = await call('cluster-by-similarity', {
      task_ids: [...noiseIds, ...allIds()],
      threshold: 0,
      linkage: 'single',
      response_format: 'detailed',
    });
    expect(status).toBe(200);
    if (!body.success) throw new Error(body.message);
    expect(body.data.unembedded_task_ids).toEqual(noiseIds);
    expect(body.data.summary).toMatchObject({ task_count: allIds().length, cluster_count: 1 });
    expect(body.message).toContain('3 tasks without a usable embedding were left out');
    for (const cluster of body.data.clusters) expect(Number.isFinite(cluster.mean_similarity)).toBe(true);
    for (const merge of body.data.merges) expect(Number.isFinite(merge.similarity)).toBe(true);

    const tooFew = await call('cluster-by-similarity', { task_ids: [...noiseIds, taskId(hiring, 0)] });
    expect(tooFew.status).toBe(400);
    expect(tooFew.body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR', details: { unembedded_task_ids: noiseIds } } });
  });
});
