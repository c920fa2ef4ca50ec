/**
 * Links to the study planner's records, in workerd through the gateway: none unless the deployment
 * configured a URL template for the kind (RECORD_URL_TEMPLATES), and then one per record the answer
 * names, with the ids the database holds and the caller's project.
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import gateway from '../../../functions/gateway.ts';
import { db } from '../helpers.ts';
import { call, newTenant, type Data, type Tenant } from './helpers.ts';

const TEMPLATES = {
  plan: 'https://app.example.com/p/{project_id}/plans/{id}',
  plan_item: 'https://app.example.com/p/{project_id}/items/{id}',
  topic: 'https://app.example.com/p/{project_id}/topics/{id}',
  flashcard: 'https://app.example.com/p/{project_id}/cards/{id}',
  quiz_attempt: 'https://app.example.com/p/{project_id}/attempts/{id}',
  message: 'https://app.example.com/p/{project_id}/messages/{id}',
};

type Link = { label: string; url: string };

/** Calls a tool as `tenant` on a deployment with every study URL template configured. */
async function callLinked(tenant: Tenant, toolId: string, input: unknown): Promise<{ data: Data; links: Link[] }> {
  const ctx = createExecutionContext();
  const response = await gateway.fetch(
    new Request(`http://edge-tools.test/tools/${toolId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(input),
    }),
    { ...env, RECORD_URL_TEMPLATES: JSON.stringify(TEMPLATES) },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  const body = (await response.json()) as { success: boolean; message: string; data: Data; links?: Link[] };
  if (!body.success) throw new Error(`${toolId} failed with ${response.status}: ${body.message}`);
  return { data: body.data, links: body.links ?? [] };
}

const url = (tenant: Tenant, path: string) => `https://app.example.com/p/${tenant.projectId}/${path}`;

describe('links to study records', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await newTenant('Study: links');
  });

  it('are absent when the deployment configured no template for study records', async () => {
    const { body } = await call(tenant, 'write-plan', { title: 'Unlinked plan', items: ['One'] });
    expect(body.success).toBe(true);
    expect((body as { links?: Link[] }).links ?? []).toEqual([]);
  });

  it('name the plan and the items a plan tool wrote or listed, by the ids stored', async () => {
    const written = await callLinked(tenant, 'write-plan', { title: 'Linked plan', items: ['Read chapter 1', 'Read chapter 2'] });
    const { rows } =
      await db.execute(sql`select p.id as plan_id, i.id as item_id from study_plans p join study_plan_items i on i.plan_id = p.id and i.project_id = p.project_id
      where p.project_id = ${tenant.projectId} and p.title = 'Linked plan' order by i.position`);
    expect(rows).toHaveLength(2);
    const [first, second] = rows as { plan_id: number; item_id: number }[];
    expect(written.links.map((link) => link.url)).toEqual([
      url(tenant, `plans/${first!.plan_id}`),
      url(tenant, `items/${first!.item_id}`),
      url(tenant, `items/${second!.item_id}`),
    ]);
    expect(written.links[0]!.label).toBe('Plan: Linked plan');

    const listed = await callLinked(tenant, 'list-plan-items', { plan_id: first!.plan_id });
    expect(listed.links).toEqual([
      { label: 'Plan: Linked plan', url: url(tenant, `plans/${first!.plan_id}`) },
      { label: 'Plan item: Read chapter 1', url: url(tenant, `items/${first!.item_id}`) },
      { label: 'Plan item: Read chapter 2', url: url(tenant, `items/${second!.item_id}`) },
    ]);
    const plans = await callLinked(tenant, 'list-plans', {});
    expect(plans.links.map((link) => link.url)).toContain(url(tenant, `plans/${first!.plan_id}`));
  });

  it('name the flashcard, the message and the quiz attempt a call saved, by the ids stored', async () => {
    const card = await callLinked(tenant, 'create-flashcard', { front: 'hola', back: 'hello' });
    const [cardRow] = (await db.execute(sql`select id from flashcards where project_id = ${tenant.projectId} and front = 'hola'`)).rows as {
      id: number;
    }[];
    expect(card.links).toEqual([{ label: 'Flashcard: hola', url: url(tenant, `cards/${cardRow!.id}`) }]);

    const saved = await callLinked(tenant, 'save-message', { session_id: 7, role: 'user', content: 'Quiz me on verbs' });
    const [messageRow] = (
      await db.execute(sql`select m.id from chat_messages m where m.project_id = ${tenant.projectId} and m.content = 'Quiz me on verbs'`)
    ).rows as { id: number }[];
    expect(saved.links).toEqual([{ label: 'Message: Quiz me on verbs', url: url(tenant, `messages/${messageRow!.id}`) }]);
    const read = await callLinked(tenant, 'get-messages', { session_id: '7' });
    expect(read.links.map((link) => link.url)).toEqual([url(tenant, `messages/${messageRow!.id}`)]);

    const round = await callLinked(tenant, 'quiz-pre-fetch', { topic_name: 'Verbs' });
    const attempt = await callLinked(tenant, 'save-quiz-attempt', {
      topic_id: round.data.topic_id,
      question: 'tener, yo?',
      user_answer: 'tiene',
      score: 0.2,
    });
    const [attemptRow] = (
      await db.execute(sql`select id, topic_id from quiz_attempts where project_id = ${tenant.projectId} and question = 'tener, yo?'`)
    ).rows as { id: number; topic_id: number }[];
    expect(attempt.links).toEqual([
      { label: 'Quiz attempt: tener, yo?', url: url(tenant, `attempts/${attemptRow!.id}`) },
      { label: `Topic ${attemptRow!.topic_id}`, url: url(tenant, `topics/${attemptRow!.topic_id}`) },
    ]);
  });
});
