/**
 * Big data within Neon's limits: the SQL-over-HTTP endpoint answers at most 10 MB, and the local
 * stand-in enforces the same limit with Neon's 507. Dense 1536-d vectors (as real embedding models
 * make them, unlike the sparse offline embedder) are about 17 kB each as pgvector text.
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { embedTasks, storeDocument } from '../../functions/documents/lib/ingest.ts';
import clusterBySimilarity from '../../functions/task-analysis/cluster-by-similarity.ts';
import { ok } from '../../shared/core/contract.ts';
import { defineTool, READ_ONLY, type ToolContext } from '../../shared/core/tool.ts';
import { createGateway } from '../../shared/http/app.ts';
import { nameBasedUuid } from '../../shared/runtime/ids.ts';
import { offlineDependencyDetector } from '../../shared/providers/offline.ts';
import { databaseFailure } from '../../shared/core/database.ts';
import { db, defaultLinks, tenantC } from './helpers.ts';
import { denseEmbedder } from './dense-embedder.ts';

const THEMES = ['hiring', 'billing', 'security', 'migration', 'marketing'];
const embeddings = denseEmbedder();
let ids: string[];
// Tenant C: the suites that write in bulk use it, so that tenant A's exact answers stay its own suites'.
const tenant = tenantC;

beforeAll(async () => {
  const lines = Array.from({ length: 1_000 }, (_, i) => `- [ ] ${THEMES[i % THEMES.length]} task number ${i} for the big plan`);
  const { tasks } = await storeDocument(db, tenant.projectId, { title: 'Big dense plan', content: lines.join('\n') });
  const report = await embedTasks(db, tenant.projectId, tasks, embeddings);
  expect(report).toMatchObject({ embedded: 1_000, failed: 0 });
  ids = tasks.map((task) => task.id);
}, 120_000);

function context(): ToolContext {
  return {
    db,
    project: { id: tenant.projectId, name: 'Tenant C' },
    providers: { embeddings, dependencies: offlineDependencyDetector },
    signal: new AbortController().signal,
    traceId: 'big-data',
    idFor: (purpose) => nameBasedUuid(`big-data:${purpose}`),
    links: defaultLinks,
    progress: () => {},
  };
}

describe("Neon's 10 MB answer limit", () => {
  it('is real here: the 1,000 dense vectors as text are one answer too large', async () => {
    const error = await db.execute(sql`select embedding::text from tasks where id = any(${sql.param(ids)}::uuid[])`).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(databaseFailure(error)?.error).toMatchObject({
      code: 'DATABASE_ERROR',
      retryable: false,
      details: { reason: 'response_too_large' },
    });
  });

  it('cluster-by-similarity clusters 1,000 dense vectors, reading them in compact batches', async () => {
    const input = clusterBySimilarity.input.parse({ task_ids: ids, threshold: 0.5, response_format: 'detailed' });
    const outcome = await clusterBySimilarity.execute(input, context());
    if (!outcome.ok) throw new Error(outcome.error.message);
    // The themes come out as the five clusters, whatever order the pages give them in.
    expect(outcome.data.summary).toEqual({ task_count: 1_000, cluster_count: 5, largest_cluster_size: 200, singleton_count: 0 });
    // Members come first, a page at a time (the merge tree follows them); each page is within budget.
    const members = new Map<number, string[]>();
    let page = outcome.data;
    for (let pages = 1; ; pages++) {
      expect(JSON.stringify(page.clusters).length).toBeLessThan(24_000 + 500);
      for (const cluster of page.clusters)
        members.set(cluster.cluster_id, [...(members.get(cluster.cluster_id) ?? []), ...cluster.task_ids!]);
      if ([...members.values()].flat().length === ids.length) break;
      expect(page.next_cursor).not.toBeNull();
      expect(pages).toBeLessThan(20);
      const next = await clusterBySimilarity.execute(
        clusterBySimilarity.input.parse({ task_ids: ids, threshold: 0.5, response_format: 'detailed', cursor: page.next_cursor }),
        context(),
      );
      if (!next.ok) throw new Error(next.error.message);
      page = next.data;
    }
    const themeOf = (id: string) => THEMES[ids.indexOf(id) % THEMES.length];
    expect([...members.values()].map((cluster) => new Set(cluster.map(themeOf)).size)).toEqual([1, 1, 1, 1, 1]);
    expect([...members.values()].flat().sort()).toEqual([...ids].sort());
  }, 120_000);

  it('is not a transient failure: an answer over the limit is attempted once, never retried', async () => {
    const oversized = defineTool({
      id: 'read-everything',
      toolset: 'documents',
      title: 'Test tool read-everything',
      annotations: READ_ONLY,
      description: 'Reads far more than one answer may hold.',
      input: z.strictObject({}),
      output: z.object({ rows: z.int() }),
      example: {},
      async execute(_input, { db: database }) {
        const { rows } = await database.execute(sql`select embedding::text from tasks where id = any(${sql.param(ids)}::uuid[])`);
        return ok({ rows: rows.length }, 'Read.');
      },
    });
    const ctx = createExecutionContext();
    const response = await createGateway([oversized], { retryDelayMs: 10 }).fetch(
      new Request('http://edge-tools.test/tools/read-everything', {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
        body: '{}',
      }),
      env,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    const body = (await response.json()) as { error: Record<string, unknown>; meta: { attempts: number } };
    expect(response.status).toBe(500);
    expect(body.error).toMatchObject({ code: 'DATABASE_ERROR', retryable: false, details: { reason: 'response_too_large' } });
    expect(body.meta.attempts).toBe(1);
    expect(JSON.stringify(body)).not.toMatch(/select|embedding::text/);
  });
});
