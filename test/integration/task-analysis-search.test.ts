/**
 * semantic-search over the task-analysis fixture's documents, end to end in workerd with the
 * offline embedder: the closest tasks best first, zero results explained, the documents asked for
 * only, never another tenant's tasks, and exact (the same ranking as an independent computation).
 * Thresholds, misses and degenerate queries in projects of their own: semantic-search.test.ts.
 */
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { embedText } from '../../shared/providers/hashing-embedder.ts';
import { parseVector } from '../support/vectors.ts';
import { db, tenantB } from './helpers.ts';
import { callsWith, documentsProject, taskId, type Data } from './task-analysis-fixture.ts';

let tenant: { projectId: string; apiKey: string };
let hiring: Data;
let compliance: Data;
const { call, data } = callsWith(() => tenant.apiKey);

beforeAll(async () => {
  ({ hiring, compliance, ...tenant } = await documentsProject('Task analysis: search'));
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
      sql`select id, embedding::text as embedding from tasks where project_id = ${tenant.projectId} and embedding_status = 'completed'`,
    );
    const expected = (rows as { id: string; embedding: string }[])
      .map((row) => ({ id: row.id, similarity: parseVector(row.embedding).reduce((sum, v, i) => sum + v * q[i]!, 0) }))
      .filter((row) => row.similarity >= 0)
      .sort((a, b) => b.similarity - a.similarity || (a.id < b.id ? -1 : 1))
      .slice(0, 50);
    expect(found.results.map((r: Data) => r.task_id)).toEqual(expected.map((row) => row.id));
  });
});
