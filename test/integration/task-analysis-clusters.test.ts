/**
 * cluster-by-similarity over the task-analysis fixture's documents, end to end in workerd: themes
 * grouped with a summary, the concise and detailed formats, one giant cluster at threshold 0 and
 * singletons at 1, the members and merge tree paged, and tasks embedded as a zero vector left out.
 */
import { inArray } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { tasks as tasksTable } from '../../drizzle/schema.ts';
import { db } from './helpers.ts';
import { callsWith, documentsProject, taskId, type Data } from './task-analysis-fixture.ts';

let tenant: { projectId: string; apiKey: string };
let hiring: Data;
let infrastructure: Data;
let compliance: Data;
const { call, data } = callsWith(() => tenant.apiKey);

beforeAll(async () => {
  ({ hiring, infrastructure, compliance, ...tenant } = await documentsProject('Task analysis: clusters'));
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
