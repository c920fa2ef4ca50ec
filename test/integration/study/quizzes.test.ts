/**
 * The study planner's quiz tools in workerd: a full round (pre-fetch, post-save), attempts and
 * the pass mark, weak topics, deletions, the quiz-post-save transaction and tenant isolation.
 * (Calls retried after a lost answer: retry-safety.test.ts.)
 */
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { tools } from '../../../functions/registry.ts';
import { createGateway } from '../../../shared/http/app.ts';
import { callTool } from '../helpers.ts';
import { call, data, failInserts, failure, newTenant, rowCount, type Data, type Tenant } from './helpers.ts';

const attemptIds = (list: Data[]) => list.map((attempt) => attempt.attempt_id);

describe('a quiz round', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await newTenant('Quizzes: round');
  });

  it('creates a topic on its first pre-fetch, and finds it by any case afterwards', async () => {
    const first = await call(tenant, 'quiz-pre-fetch', { topic_name: 'French verbs' });
    expect(first.body).toMatchObject({
      success: true,
      data: { topic_id: 1, topic_name: 'French verbs', created: true, wrong_questions: [], pass_mark: 0.7 },
    });
    expect(first.body.message).toContain('quiz-post-save');
    const again = await data(tenant, 'quiz-pre-fetch', { topic_name: 'FRENCH VERBS' });
    expect(again).toMatchObject({ topic_id: 1, topic_name: 'French verbs', created: false });
    expect(await rowCount('study_topics', tenant.projectId)).toBe(1);
  });

  it('saves attempts, and counts as wrong exactly those scoring below the pass mark', async () => {
    const scores = [0, 0.69, 0.7, 1, undefined];
    const saved = [];
    for (const [i, score] of scores.entries()) {
      saved.push(
        await data(tenant, 'save-quiz-attempt', {
          topic_id: 1,
          question: `Question ${i}`,
          user_answer: `Answer ${i}`,
          score,
          feedback: `Feedback ${i}`,
        }),
      );
    }
    expect(saved.map((a) => [a.attempt_id, a.wrong])).toEqual([
      [1, true],
      [2, true],
      [3, false],
      [4, false],
      [5, null],
    ]);
    expect(saved[0]).toMatchObject({ topic_id: 1, question: 'Question 0', user_answer: 'Answer 0', score: 0, feedback: 'Feedback 0' });
    const wrong = await data(tenant, 'get-wrong-questions', { topic_id: 1 });
    expect(attemptIds(wrong.wrong_questions)).toEqual([2, 1]);
  });

  it('pre-fetches the wrong questions, then post-saves the round: new wrong answers in, corrected ones out', async () => {
    const before = await data(tenant, 'quiz-pre-fetch', { topic_name: 'french verbs' });
    expect(attemptIds(before.wrong_questions)).toEqual([2, 1]);
    const { body } = await call(tenant, 'quiz-post-save', {
      topic_id: before.topic_id,
      wrong_answers: [
        { question: 'Passé composé of "aller", je?', user_answer: "j'ai allé", feedback: 'Être verb: "je suis allé".' },
        { question: 'Subjunctive of "faire", que je?', user_answer: 'fais' },
      ],
      correct_retries: [1],
    });
    expect(body).toMatchObject({
      success: true,
      data: { topic_id: 1, saved_wrong: 2, deleted_correct: 1, saved_attempt_ids: [6, 7], deleted_attempt_ids: [1] },
    });
    expect(body.message).toBe('Topic 1 "French verbs": saved 2 wrong answers and cleared 1 earlier wrong attempt now answered correctly.');
    expect(await rowCount('quiz_attempts', tenant.projectId, sql`id = 1`)).toBe(0);
    const after = await data(tenant, 'get-wrong-questions', { topic_id: 'French verbs' });
    expect(after.wrong_questions.map((a: Data) => [a.attempt_id, a.score, a.feedback])).toEqual([
      [7, 0, null],
      [6, 0, 'Être verb: "je suis allé".'],
      [2, 0.69, 'Feedback 1'],
    ]);
  });

  it('answers NOT_FOUND, saving nothing, when a corrected attempt is not in the topic', async () => {
    await data(tenant, 'quiz-pre-fetch', { topic_name: 'German cases' }); // topic 2
    const other = await data(tenant, 'save-quiz-attempt', { topic_id: 2, question: 'Dative of "der"?', score: 0 });
    const attempts = await rowCount('quiz_attempts', tenant.projectId);
    const error = await failure(
      tenant,
      'quiz-post-save',
      { topic_id: 1, wrong_answers: [{ question: 'Never saved', user_answer: '?' }], correct_retries: [2, other.attempt_id, 999] },
      404,
      'NOT_FOUND',
    );
    expect(error.details).toEqual({ entity_type: 'quiz_attempt', query: { topic_id: 1, correct_retries: [other.attempt_id, 999] } });
    expect(error.message).toContain('nothing was saved or deleted');
    expect(await rowCount('quiz_attempts', tenant.projectId)).toBe(attempts);
    const unknownTopic = await failure(tenant, 'quiz-post-save', { topic_id: 42, correct_retries: [2] }, 404, 'NOT_FOUND');
    expect(unknownTopic.details).toEqual({ entity_type: 'topic', query: { topic_id: 42 } });
  });

  it('answers an empty round as a success that saved and deleted nothing', async () => {
    const attempts = await rowCount('quiz_attempts', tenant.projectId);
    const { body } = await call(tenant, 'quiz-post-save', { topic_id: 1 });
    expect(body).toMatchObject({
      success: true,
      data: { topic_id: 1, saved_wrong: 0, deleted_correct: 0, saved_attempt_ids: [], deleted_attempt_ids: [] },
    });
    expect(body.message).toContain('nothing to save');
    expect(await rowCount('quiz_attempts', tenant.projectId)).toBe(attempts);
  });

  it.each([
    ['a repeated attempt id', { topic_id: 1, correct_retries: [2, 2] }, [{ field: 'correct_retries', code: 'duplicate_item' }]],
    [
      'a wrong answer without the answer',
      { topic_id: 1, wrong_answers: [{ question: 'Q?' }] },
      [{ field: 'wrong_answers[0].user_answer', code: 'required' }],
    ],
    [
      'a topic_id that is not an integer',
      { topic_id: 'French verbs', correct_retries: [2] },
      [{ field: 'topic_id', code: 'invalid_type' }],
    ],
  ])('refuses %s, naming the field', async (_case, input, fields) => {
    const error = await failure(tenant, 'quiz-post-save', input, 400, 'VALIDATION_ERROR');
    expect(error.details.fields).toMatchObject(fields);
  });
});

describe('quiz-post-save is one transaction', () => {
  let tenant: Tenant;
  let topicId: number;
  beforeAll(async () => {
    tenant = await newTenant('Quizzes: transaction');
    topicId = (await data(tenant, 'quiz-pre-fetch', { topic_name: 'Chemistry' })).topic_id;
    for (const question of ['Symbol of sodium?', 'Symbol of potassium?', 'Symbol of iron?']) {
      await data(tenant, 'save-quiz-attempt', { topic_id: topicId, question, user_answer: 'No idea', score: 0 });
    }
  });

  it('saves nothing when the deletions fail after the wrong answers were written', async () => {
    const before = await rowCount('quiz_attempts', tenant.projectId);
    const restore = await failInserts('write_receipts', `new.project_id = '${tenant.projectId}'`, 'P0001', 1_000);
    try {
      await failure(
        tenant,
        'quiz-post-save',
        { topic_id: topicId, wrong_answers: [{ question: 'Symbol of gold?', user_answer: 'Go' }], correct_retries: [1] },
        500,
        'DATABASE_ERROR',
      );
    } finally {
      await restore();
    }
    expect(await rowCount('quiz_attempts', tenant.projectId)).toBe(before);
    expect(await rowCount('quiz_attempts', tenant.projectId, sql`question = 'Symbol of gold?'`)).toBe(0);
    expect(await rowCount('quiz_attempts', tenant.projectId, sql`id = 1`)).toBe(1);
    expect(await rowCount('write_receipts', tenant.projectId)).toBe(0);
  });

  it('retries a transient failure inside the transaction and saves the round exactly once', async () => {
    const restore = await failInserts('write_receipts', `new.project_id = '${tenant.projectId}'`, '40001', 1);
    let answer;
    try {
      answer = await callTool<Data>(
        'quiz-post-save',
        { topic_id: topicId, wrong_answers: [{ question: 'Symbol of silver?', user_answer: 'Si' }], correct_retries: [1, 2] },
        { key: tenant.apiKey, worker: createGateway(tools, { retryDelayMs: 10 }) },
      );
    } finally {
      await restore();
    }
    expect(answer.body).toMatchObject({
      success: true,
      data: { saved_wrong: 1, deleted_correct: 2, deleted_attempt_ids: [1, 2] },
      meta: { attempts: 2 },
    });
    expect(await rowCount('quiz_attempts', tenant.projectId, sql`question = 'Symbol of silver?'`)).toBe(1);
    expect(await rowCount('quiz_attempts', tenant.projectId, sql`id in (1, 2)`)).toBe(0);
  });
});

describe('save-quiz-attempt', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await newTenant('Quizzes: attempts');
  });

  it('saves an attempt without a topic', async () => {
    expect(await data(tenant, 'save-quiz-attempt', { question: 'Capital of Peru?', user_answer: 'Lima', score: 1 })).toMatchObject({
      attempt_id: 1,
      topic_id: null,
      wrong: false,
    });
  });

  it('answers NOT_FOUND for an unknown topic, saving nothing', async () => {
    const error = await failure(tenant, 'save-quiz-attempt', { topic_id: 7, question: 'Orphan?', score: 0 }, 404, 'NOT_FOUND');
    expect(error.details).toEqual({ entity_type: 'topic', query: { topic_id: 7 } });
    expect(await rowCount('quiz_attempts', tenant.projectId, sql`question = 'Orphan?'`)).toBe(0);
  });

  it.each([
    ['a score above 1', { question: 'Q?', score: 1.5 }, 'score', 'too_big'],
    ['no question', { score: 1 }, 'question', 'required'],
    ['an unknown field', { question: 'Q?', grade: 'A' }, 'grade', 'unknown_field'],
  ])('refuses %s, naming the field', async (_case, input, field, code) => {
    const error = await failure(tenant, 'save-quiz-attempt', input, 400, 'VALIDATION_ERROR');
    expect(error.details.fields).toMatchObject([{ field, code }]);
  });
});

describe('get-wrong-questions', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await newTenant('Quizzes: wrong questions');
    await data(tenant, 'quiz-pre-fetch', { topic_name: 'Geometry' });
    for (let i = 1; i <= 5; i++) await data(tenant, 'save-quiz-attempt', { topic_id: 1, question: `Angle ${i}?`, score: 0.1 });
  });

  it('pages through the wrong answers, newest first', async () => {
    const first = await call(tenant, 'get-wrong-questions', { topic_id: 'geometry', limit: 2 });
    expect(first.body).toMatchObject({ success: true, meta: { truncated: true } });
    if (!first.body.success) return;
    expect(attemptIds(first.body.data.wrong_questions)).toEqual([5, 4]);
    const second = await data(tenant, 'get-wrong-questions', { topic_id: 1, limit: 2, cursor: first.body.data.next_cursor });
    const third = await data(tenant, 'get-wrong-questions', { topic_id: 1, limit: 2, cursor: second.next_cursor });
    expect([...attemptIds(second.wrong_questions), ...attemptIds(third.wrong_questions)]).toEqual([3, 2, 1]);
    expect(third.next_cursor).toBeNull();
  });

  it('answers NOT_FOUND naming an unknown topic', async () => {
    const error = await failure(tenant, 'get-wrong-questions', { topic_id: 'Algebra' }, 404, 'NOT_FOUND');
    expect(error.details).toEqual({ entity_type: 'topic', query: { topic_name: 'Algebra' } });
    expect(error.message).toMatch(/Ask the user which topic they mean/);
  });

  it("takes the topic's name in topic_id as well as its id, and refuses the old topic_name field by name", async () => {
    const byName = await data(tenant, 'get-wrong-questions', { topic_id: 'GEOMETRY', limit: 1 });
    const byId = await data(tenant, 'get-wrong-questions', { topic_id: byName.topic_id, limit: 1 });
    expect(byName).toEqual(byId);
    const error = await failure(tenant, 'get-wrong-questions', { topic_id: 1, topic_name: 'Geometry' }, 400, 'VALIDATION_ERROR');
    expect(error.details.fields).toMatchObject([{ field: 'topic_name', code: 'unknown_field' }]);
  });
});

describe('get-weak-topics', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await newTenant('Quizzes: weak topics');
    const scores: Record<string, (number | undefined)[]> = {
      Strong: [1, 0.9, 0.8],
      Weak: [0, 0.2, 1],
      Middling: [0.5, 0.6],
      Ungraded: [undefined, undefined],
    };
    for (const [topic, list] of Object.entries(scores)) {
      const { topic_id } = await data(tenant, 'quiz-pre-fetch', { topic_name: topic });
      for (const score of list) await data(tenant, 'save-quiz-attempt', { topic_id, question: `${topic}?`, score });
    }
  });

  it('ranks topics by mean score, weakest first, leaving out topics without graded attempts', async () => {
    const weak = await data(tenant, 'get-weak-topics', { limit: 10 });
    expect(weak.weak_topics).toEqual([
      { topic_id: 2, topic_name: 'Weak', attempt_count: 3, graded_count: 3, wrong_count: 2, mean_score: 0.4 },
      { topic_id: 3, topic_name: 'Middling', attempt_count: 2, graded_count: 2, wrong_count: 2, mean_score: 0.55 },
      { topic_id: 1, topic_name: 'Strong', attempt_count: 3, graded_count: 3, wrong_count: 0, mean_score: 0.9 },
    ]);
  });

  it('pages with a cursor', async () => {
    const first = await data(tenant, 'get-weak-topics', { limit: 2 });
    const second = await data(tenant, 'get-weak-topics', { limit: 2, cursor: first.next_cursor });
    expect([...first.weak_topics, ...second.weak_topics].map((t: Data) => t.topic_name)).toEqual(['Weak', 'Middling', 'Strong']);
    expect(second.next_cursor).toBeNull();
  });
});

describe('delete-quiz-attempt', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await newTenant('Quizzes: delete');
    for (const question of ['Keep me?', 'Delete me?', 'Delete me too?']) await data(tenant, 'save-quiz-attempt', { question, score: 0 });
  });

  it('deletes the attempt, and a second call finds nothing to delete', async () => {
    expect(await data(tenant, 'delete-quiz-attempt', { attempt_id: 2 })).toEqual({ deleted_attempt_id: 2 });
    expect(await rowCount('quiz_attempts', tenant.projectId, sql`id = 2`)).toBe(0);
    const error = await failure(tenant, 'delete-quiz-attempt', { attempt_id: 2 }, 404, 'NOT_FOUND');
    expect(error.details).toEqual({ entity_type: 'quiz_attempt', query: { attempt_id: 2 } });
    expect(await rowCount('quiz_attempts', tenant.projectId)).toBe(2);
  });
});

describe('tenant isolation', () => {
  let owner: Tenant;
  let other: Tenant;
  beforeAll(async () => {
    owner = await newTenant('Quizzes: owner');
    other = await newTenant('Quizzes: other');
    for (const topic_name of ['Owner topic', 'Owner second topic', 'Owner secret topic'])
      await data(owner, 'quiz-pre-fetch', { topic_name });
    // Topic 3 and attempts 2 and 3 exist in the owner's project only.
    for (const question of ['Owner question 1?', 'Owner question 2?', 'Owner question 3?'])
      await data(owner, 'save-quiz-attempt', { topic_id: 3, question, score: 0 });
    await data(other, 'quiz-pre-fetch', { topic_name: 'Other topic' }); // the other project's topic 1
    await data(other, 'save-quiz-attempt', { topic_id: 1, question: 'Other question?', score: 0 }); // its attempt 1
  });

  it("never shows another project's topics or attempts", async () => {
    expect((await data(other, 'get-weak-topics', {})).weak_topics.map((t: Data) => t.topic_name)).toEqual(['Other topic']);
    await failure(other, 'get-wrong-questions', { topic_id: 'Owner secret topic' }, 404, 'NOT_FOUND');
    await failure(other, 'get-wrong-questions', { topic_id: 3 }, 404, 'NOT_FOUND');
    const fetched = await data(other, 'quiz-pre-fetch', { topic_name: 'Owner secret topic' });
    expect(fetched).toMatchObject({ created: true, topic_id: 2, wrong_questions: [] });
  });

  it("cannot delete, clear or add to another project's attempts", async () => {
    const owned = async () => (await data(owner, 'get-wrong-questions', { topic_id: 3 })).wrong_questions;
    const before = await owned();
    expect(attemptIds(before)).toEqual([3, 2, 1]);
    await failure(other, 'delete-quiz-attempt', { attempt_id: 3 }, 404, 'NOT_FOUND');
    await failure(other, 'quiz-post-save', { topic_id: 3, correct_retries: [2, 3] }, 404, 'NOT_FOUND');
    await failure(other, 'quiz-post-save', { topic_id: 1, correct_retries: [2, 3] }, 404, 'NOT_FOUND');
    await failure(other, 'save-quiz-attempt', { topic_id: 3, question: 'Into their topic?' }, 404, 'NOT_FOUND');
    // Ids both projects have name each project's own attempt.
    expect(await data(other, 'delete-quiz-attempt', { attempt_id: 1 })).toEqual({ deleted_attempt_id: 1 });
    expect(await owned()).toEqual(before);
    expect(await rowCount('quiz_attempts', owner.projectId)).toBe(3);
  });
});
