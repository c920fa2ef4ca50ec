/**
 * detect-dependencies and query-task-graph end to end in workerd with the offline heuristic: the
 * "after" wording detected and saved idempotently, circular dependencies, transitive walks by depth
 * and direction ending on cycles, and both tools' pages (each relationship once, within the budget).
 */
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from './helpers.ts';
import { callsWith, documentsProject, heavy, taskIdsOf, type Data } from './task-analysis-fixture.ts';

let tenant: { projectId: string; apiKey: string };
let hiring: Data;
const { call, data } = callsWith(() => tenant.apiKey);

beforeAll(async () => {
  ({ hiring, ...tenant } = await documentsProject('Task analysis: dependencies'));
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
            sql`select count(*)::int as n from task_relationships where project_id = ${tenant.projectId} and source_task_id = any(${sql.param(ids)}::uuid[])`,
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
