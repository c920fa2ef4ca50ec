/**
 * semantic-search's answers end to end in workerd, on the local Neon stand-in with the offline
 * embedder, each scenario in a project of its own so counts are exact: thresholds (the provider's
 * default, or the one asked for), shown numbers that survive being used as thresholds, what an
 * empty project and a miss say, NOT_FOUND for unknown document ids, degenerate queries and tasks
 * (never NaN), and tasks embedded by another model.
 */
import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { tasks as tasksTable } from '../../drizzle/schema.ts';
import { parseVector } from '../support/vectors.ts';
import { embedText, HASHING_EMBEDDER_ID, HASHING_EMBEDDER_THRESHOLD } from '../../shared/providers/hashing-embedder.ts';
import { callTool, createTenant, db, tenantB } from './helpers.ts';

type Data = Record<string, any>;

/** A project of its own, with an API key, and calls made with that key. */
async function freshProject(name: string) {
  const { projectId, apiKey: key } = await createTenant(name);
  const call = (toolId: string, input: unknown) => callTool<Data>(toolId, input, { key });
  const data = async (toolId: string, input: unknown): Promise<Data> => {
    const { status, body } = await call(toolId, input);
    if (!body.success) throw new Error(`${toolId} failed with ${status}: ${body.message}`);
    return body.data;
  };
  const search = async (input: Record<string, unknown>) => {
    const { status, body } = await call('semantic-search', input);
    if (!body.success) throw new Error(`semantic-search failed with ${status}: ${body.message}`);
    return { data: body.data, message: body.message };
  };
  return { id: projectId, key, call, data, search };
}

const PLAN = `# Platform plan
- [ ] Hire two senior backend engineers for the platform team
- [ ] Migrate the billing database to Postgres 16
- [ ] Renew the SOC 2 audit with the external auditors
- [ ] Write the onboarding guide for new engineers
- [ ] Set up nightly backups of the billing database
`;

describe('semantic-search: thresholds', () => {
  it("applies the embedding model's default threshold when none is given, and says so", async () => {
    const project = await freshProject('Search defaults');
    const plan = await project.data('add-document', { title: 'Platform plan', content: PLAN });
    // Other inflections, other order, other words around: the words a person would use.
    const { data, message } = await project.search({ query: 'hiring engineers for the backend' });
    expect(data.threshold).toBe(HASHING_EMBEDDER_THRESHOLD);
    expect(data.embedding_model).toBe(HASHING_EMBEDDER_ID);
    expect(data.results[0]).toMatchObject({ task_id: plan.tasks[0].task_id, document_title: 'Platform plan' });
    for (const result of data.results) expect(result.similarity).toBeGreaterThanOrEqual(HASHING_EMBEDDER_THRESHOLD);
    expect(message).toContain(`with similarity >= ${HASHING_EMBEDDER_THRESHOLD} (the default for ${HASHING_EMBEDDER_ID})`);

    const asked = await project.search({ query: 'hiring engineers for the backend', threshold: 0.5, limit: 50 });
    expect(asked.data.threshold).toBe(0.5);
    expect(asked.message).toContain('with similarity >= 0.5 (as asked)');
    for (const result of asked.data.results) expect(result.similarity).toBeGreaterThanOrEqual(0.5);
    // null is absent: the default applies (OpenAI strict mode sends null for every optional field).
    expect((await project.search({ query: 'billing database', threshold: null })).data.threshold).toBe(HASHING_EMBEDDER_THRESHOLD);
  });

  it('finds tasks sharing one content word with the query at the default threshold', async () => {
    const project = await freshProject('Search one word');
    const plan = await project.data('add-document', { title: 'Platform plan', content: PLAN });
    const { data } = await project.search({ query: 'audits' });
    expect(data.results.map((r: Data) => r.task_id)).toEqual([plan.tasks[2].task_id]);
    const backups = await project.search({ query: 'backing up databases every night' });
    expect(backups.data.results[0].task_id).toBe(plan.tasks[4].task_id);
  });

  it('shows similarities that survive being used as the threshold', async () => {
    const project = await freshProject('Search shown numbers');
    await project.data('add-document', { title: 'Platform plan', content: PLAN });
    const query = 'billing database engineers';
    const { data } = await project.search({ query, threshold: 0, limit: 50 });
    expect(data.results.length).toBeGreaterThan(2);
    // Shown to 4 decimals, rounded down: an independent computation from the stored vectors agrees.
    const q = embedText(query);
    const { rows } = await db.execute(sql`select id, embedding::text as embedding from tasks where project_id = ${project.id}`);
    const exact = new Map(
      (rows as { id: string; embedding: string }[]).map((row) => [
        row.id,
        parseVector(row.embedding).reduce((s, v, i) => s + v * q[i]!, 0),
      ]),
    );
    for (const result of data.results) {
      expect(Number.isInteger(Math.round(result.similarity * 10_000 * 1e6) / 1e6)).toBe(true);
      expect(result.similarity).toBeLessThanOrEqual(exact.get(result.task_id)! + 1e-6);
      expect(result.similarity).toBeGreaterThan(exact.get(result.task_id)! - 1e-4 - 1e-6);
    }
    for (const shown of data.results) {
      const again = await project.search({ query, threshold: shown.similarity, limit: 50 });
      expect(again.data.results.map((r: Data) => r.task_id)).toContain(shown.task_id);
    }
  });
});

describe('semantic-search: when nothing is found', () => {
  it('says the project has no tasks to search, instead of suggesting a lower threshold', async () => {
    const project = await freshProject('Search empty');
    const { data, message } = await project.search({ query: 'hire backend engineers' });
    expect(data).toMatchObject({ results: [], unembedded_task_count: 0, threshold: HASHING_EMBEDDER_THRESHOLD });
    expect(data.best_similarity).toBeUndefined();
    expect(message).toMatch(/no tasks in this project to search yet/);
    expect(data.suggestion).toMatch(/add-document/);
    expect(`${message} ${data.suggestion}`).not.toMatch(/threshold/i);
  });

  it('gives the best similarity and a threshold that really returns it', async () => {
    const project = await freshProject('Search miss');
    await project.data('add-document', { title: 'Platform plan', content: PLAN });
    const query = 'engineers for the quantum lab';
    const miss = await project.search({ query, threshold: 0.95 });
    expect(miss.data.results).toEqual([]);
    expect(miss.data.best_similarity).toBeGreaterThan(0);
    expect(miss.data.best_similarity).toBeLessThan(0.95);
    const suggested = Number(/Retry with threshold ([\d.]+)/.exec(miss.data.suggestion)![1]);
    expect(suggested).toBeLessThanOrEqual(miss.data.best_similarity);
    expect(miss.message).toContain(`scores ${miss.data.best_similarity}`);
    expect(miss.message).toContain(`threshold ${suggested} would return it`);

    const retried = await project.search({ query, threshold: suggested });
    expect(retried.data.results.length).toBeGreaterThan(0);
    expect(retried.data.results[0].similarity).toBe(miss.data.best_similarity);
  });

  it('says when no task resembles the query at all', async () => {
    const project = await freshProject('Search unrelated');
    await project.data('add-document', { title: 'Platform plan', content: PLAN });
    const { data, message } = await project.search({ query: 'sourdough bread baking' });
    expect(data.results).toEqual([]);
    expect(message).toMatch(/(is similar to|reaches the threshold)/);
    expect(data.suggestion).toMatch(/rephrase the query/);
  });
});

describe('semantic-search: document_ids', () => {
  it('answers NOT_FOUND naming the documents the project does not have, its own or not', async () => {
    const project = await freshProject('Search documents');
    const plan = await project.data('add-document', { title: 'Platform plan', content: PLAN });
    const unknown = crypto.randomUUID();
    const other = await callTool<Data>('add-document', { title: 'Theirs', content: '- [ ] Hire a designer' }, { key: tenantB.apiKey });
    if (!other.body.success) throw new Error(other.body.message);
    const theirs = other.body.data.document_id as string;

    const { status, body } = await project.call('semantic-search', {
      query: 'hire engineers',
      document_ids: [plan.document_id, unknown, theirs],
    });
    expect(status).toBe(404);
    expect(body).toMatchObject({
      success: false,
      error: { code: 'NOT_FOUND', details: { entity_type: 'document', query: { document_ids: [unknown, theirs] } } },
    });
    expect(body.message).toContain(unknown);
    expect(body.message).toContain(theirs);
    expect(body.message).not.toContain(plan.document_id);
  });

  it('matches document ids case-insensitively', async () => {
    const project = await freshProject('Search document case');
    const plan = await project.data('add-document', { title: 'Platform plan', content: PLAN });
    await project.data('add-document', { title: 'Other plan', content: '- [ ] Hire a backend engineer for the data team' });
    const { data, message } = await project.search({
      query: 'hire backend engineers',
      document_ids: [plan.document_id.toUpperCase()],
      threshold: 0,
    });
    expect(data.results.length).toBeGreaterThan(0);
    expect(new Set(data.results.map((r: Data) => r.document_id))).toEqual(new Set([plan.document_id]));
    expect(message).toContain('in the 1 document asked for');
  });
});

describe('semantic-search: never NaN', () => {
  it('refuses a query with nothing to search by, naming the field', async () => {
    const project = await freshProject('Search degenerate queries');
    await project.data('add-document', { title: 'Platform plan', content: PLAN });
    for (const query of ['a', 'the', '???', '🚀', 'the tasks about it']) {
      const { status, body } = await project.call('semantic-search', { query });
      expect([query, status]).toEqual([query, 400]);
      expect(body).toMatchObject({
        success: false,
        error: { code: 'VALIDATION_ERROR', retryable: false, details: { fields: [{ field: 'query', code: 'no_search_terms' }] } },
      });
      expect(body.message).toMatch(/no words to search by/);
      if (!body.success) expect(body.error.hint).toContain('hire backend engineers');
    }
  });

  it('scores degenerate tasks without breaking search, and never scores a zero vector', async () => {
    const project = await freshProject('Search degenerate tasks');
    const plan = await project.data('add-document', { title: 'Degenerate', content: `${PLAN}- [ ] the\n- [ ] ???\n- [ ] 🚀\n` });
    expect(plan).toMatchObject({ task_count: 8, embedded_count: 8 });
    // A vector with no direction, as another provider or an old row could have stored.
    const zero = `[${new Array(1536).fill(0).join(',')}]`;
    await db.execute(sql`update tasks set embedding = ${zero}::vector where id = ${plan.tasks[1].task_id}`);

    for (const query of ['billing database', 'hire backend engineers', 'the tasks about billing']) {
      const { data } = await project.search({ query, threshold: 0, limit: 50 });
      expect(data.results.length).toBeGreaterThan(0);
      for (const result of data.results) expect(Number.isFinite(result.similarity)).toBe(true);
      expect(data.results.map((r: Data) => r.task_id)).not.toContain(plan.tasks[1].task_id);
    }
    const billing = await project.search({ query: 'billing database' });
    expect(billing.data.results.map((r: Data) => r.task_id)).toEqual([plan.tasks[4].task_id]);
  });
});

describe('semantic-search: tasks embedded by another model', () => {
  it('leaves them out, counts them, and embed-tasks re-embeds them with the configured model', async () => {
    const project = await freshProject('Search stale vectors');
    const plan = await project.data('add-document', { title: 'Platform plan', content: PLAN });
    const stale = [plan.tasks[0].task_id, plan.tasks[3].task_id];
    for (const id of stale) await db.update(tasksTable).set({ embeddingModel: 'offline-hashing-v1' }).where(eq(tasksTable.id, id));

    const before = await project.search({ query: 'hire engineers', threshold: 0 });
    expect(before.data.unembedded_task_count).toBe(2);
    for (const id of stale) expect(before.data.results.map((r: Data) => r.task_id)).not.toContain(id);
    expect(before.message).toMatch(/2 tasks are not searchable yet .*embed-tasks/);

    const embedded = await project.data('embed-tasks', {});
    expect(embedded).toMatchObject({ embedded_count: 2, failed_count: 0, remaining_count: 0, embedding_model: HASHING_EMBEDDER_ID });
    const rows = await db
      .select()
      .from(tasksTable)
      .where(and(eq(tasksTable.projectId, project.id), eq(tasksTable.embeddingModel, HASHING_EMBEDDER_ID)));
    expect(rows).toHaveLength(5);

    const after = await project.search({ query: 'hire engineers' });
    expect(after.data.unembedded_task_count).toBe(0);
    expect(after.data.results[0].task_id).toBe(plan.tasks[0].task_id);
    expect(await project.data('embed-tasks', {})).toMatchObject({ embedded_count: 0, remaining_count: 0 });
  });

  it('says so when none of the tasks is searchable yet', async () => {
    const project = await freshProject('Search all stale');
    await project.data('add-document', { title: 'Platform plan', content: PLAN });
    await db.update(tasksTable).set({ embeddingModel: 'openai:text-embedding-3-small' }).where(eq(tasksTable.projectId, project.id));
    const { data, message } = await project.search({ query: 'billing database' });
    expect(data).toMatchObject({ results: [], unembedded_task_count: 5 });
    expect(message).toMatch(/None of the 5 tasks in this project is searchable yet/);
    expect(data.suggestion).toMatch(/embed-tasks/);
  });
});
