/**
 * The study planner's demo data: a plan with items in several statuses, quiz topics with attempts
 * (some wrong, one saved twice by mistake), flashcards due now (some overdue, one not due yet) and
 * a conversation. It is written through the study tools themselves (their input schema, then their
 * execute), so it is exactly what an agent's calls would have written.
 *
 * Used by `npm run dev` and the test setup, on projects without study data: ids are numbered per
 * project, so the demo records get the same ids in every project (plan 1, topic 1, card 1, …), and
 * the tools' examples name them.
 */
import { sql } from 'drizzle-orm';
import type { AnyTool, ToolContext } from '../shared/core/tool.ts';
import { createDb } from '../shared/runtime/db.ts';
import type { Database } from '../shared/core/database.ts';
import { nameBasedUuid } from '../shared/runtime/ids.ts';
import { linksFromEnv } from '../shared/runtime/link-templates.ts';
import addPlanItem from '../functions/study/add-plan-item.ts';
import createFlashcard from '../functions/study/create-flashcard.ts';
import quizPreFetch from '../functions/study/quiz-pre-fetch.ts';
import saveMessage from '../functions/study/save-message.ts';
import saveQuizAttempt from '../functions/study/save-quiz-attempt.ts';
import updateFlashcardReview from '../functions/study/update-flashcard-review.ts';
import updateItemStatus from '../functions/study/update-item-status.ts';
import writePlan from '../functions/study/write-plan.ts';

const DAY_MS = 86_400_000;

/** Has the project any study record (plan, topic, attempt, card or message) yet? */
export async function hasStudyData(databaseUrl: string, projectId: string): Promise<boolean> {
  const { rows } = await createDb(databaseUrl).execute(
    sql`select exists (select 1 from study_counters where project_id = ${projectId}) as found`,
  );
  return (rows[0] as { found: boolean }).found;
}

/** The quiz attempts of the demo: topic 1's attempts 1-4 (three wrong), topic 2's 5-7 (6 repeats 5 by mistake, 7 wrong). */
const DEMO_ATTEMPTS = [
  {
    topic_id: 1,
    question: 'What is the yo form of "ir" in the present subjunctive?',
    user_answer: 'voy',
    score: 0,
    feedback: 'It is "vaya": "voy" is the indicative.',
  },
  {
    topic_id: 1,
    question: 'Translate: "I hope it rains tomorrow."',
    user_answer: 'Espero que llueve mañana.',
    score: 0.5,
    feedback: 'After "espero que" use the subjunctive: "llueva".',
  },
  {
    topic_id: 1,
    question: 'Ser or estar: "La fiesta ___ en mi casa."',
    user_answer: 'está',
    score: 0,
    feedback: 'Events take "ser": "es en mi casa".',
  },
  {
    topic_id: 1,
    question: 'What is the plural of "el lápiz"?',
    user_answer: 'los lápices',
    score: 1,
    feedback: 'Correct: z becomes c before -es.',
  },
  {
    topic_id: 2,
    question: 'Where in the cell does photosynthesis happen?',
    user_answer: 'In the chloroplasts',
    score: 1,
    feedback: 'Correct.',
  },
  {
    topic_id: 2,
    question: 'Where in the cell does photosynthesis happen?',
    user_answer: 'In the chloroplasts',
    score: 1,
    feedback: 'Correct.',
  },
  {
    topic_id: 2,
    question: 'What does the mitochondrion produce?',
    user_answer: 'Glucose',
    score: 0.2,
    feedback: 'It produces ATP; glucose is made by photosynthesis.',
  },
];

/** The demo's flashcards 1-5. */
const DEMO_CARDS = [
  { front: 'tener, yo, present subjunctive', back: 'tenga', topic_id: 1 },
  { front: 'ir, yo, present subjunctive', back: 'vaya', topic_id: 1 },
  { front: 'la mochila', back: 'the backpack', topic_id: 1 },
  { front: 'The organelle that produces ATP', back: 'the mitochondrion', topic_id: 2 },
  { front: 'Where photosynthesis happens', back: 'the chloroplast', topic_id: 2 },
];

/** The demo's conversation, `demo-session`. */
const DEMO_CONVERSATION = [
  ['user', 'Can you help me prepare for my Spanish B1 exam?'],
  ['assistant', 'Yes. I made a plan, "Spanish B1 exam", starting with the subjunctive. Shall we start with a quiz?'],
  ['user', 'Yes, quiz me on the subjunctive.'],
  ['assistant', 'What is the yo form of "ir" in the present subjunctive?'],
] as const;

/** Writes the demo study data into the project. */
export async function seedStudy(databaseUrl: string, projectId: string): Promise<void> {
  const run = caller(createDb(databaseUrl), projectId);
  const inDays = (days: number) => new Date(Date.now() + days * DAY_MS);
  const date = (days: number) => inDays(days).toISOString().slice(0, 10);

  // Plans: plan 1 (items 1-4), then plan 2 (items 5-7), the latest.
  await run(writePlan, {
    title: 'Spanish B1 exam',
    items: [
      { title: 'Review the subjunctive', due_date: date(7), notes: 'Present subjunctive first, then the imperfect.' },
      'Learn 200 travel words',
      'Read a short story',
      { title: 'Mock oral exam', due_date: date(21), notes: 'Ask a tutor for a 15-minute mock.' },
    ],
  });
  await run(updateItemStatus, { plan_id: 1, item_id: 'Learn 200 travel words', status: 'in_progress' });
  await run(updateItemStatus, { plan_id: 1, item_id: 'Read a short story', status: 'completed' });
  await run(writePlan, { title: 'Biology final', items: ['Cell structure', 'Photosynthesis'] });
  await run(addPlanItem, { plan_id: 'latest', title: 'Genetics basics', due_date: date(30) });

  // Quizzes: topic 1 with attempts 1-4 (three wrong), topic 2 with attempts 5-7 (6 repeats 5 by mistake, 7 wrong).
  await run(quizPreFetch, { topic_name: 'Spanish grammar' });
  await run(quizPreFetch, { topic_name: 'Cell biology' });
  for (const attempt of DEMO_ATTEMPTS) await run(saveQuizAttempt, attempt);

  // Flashcards 1-5: new and due now; 1 and 2 made overdue, 5 reviewed (so not due for days).
  for (const card of DEMO_CARDS) await run(createFlashcard, card);
  await run(updateFlashcardReview, { card_id: 1, next_review_at: inDays(-2).toISOString() });
  await run(updateFlashcardReview, { card_id: 2, next_review_at: inDays(-1).toISOString() });
  await run(updateFlashcardReview, { card_id: 5, grade: 'easy' });

  // A conversation.
  for (const [role, content] of DEMO_CONVERSATION) await run(saveMessage, { session_id: 'demo-session', role, content });
}

/** Runs tools as one agent's calls would: the input validated by the tool's schema, then its execute. */
function caller(db: Database, projectId: string) {
  let calls = 0;
  const run = async (tool: AnyTool, input: Record<string, unknown>): Promise<void> => {
    const call = ++calls;
    const context: ToolContext = {
      db,
      project: { id: projectId, name: 'seed' },
      get providers(): never {
        throw new Error('The study tools need no providers.');
      },
      signal: new AbortController().signal,
      traceId: crypto.randomUUID(),
      idFor: (purpose) => nameBasedUuid(`${projectId}:study-seed:${call}:${purpose}`),
      // The answers (and their links) are not kept.
      links: (linksFromEnv({}, 'http://127.0.0.1') as { ok: true; links: ToolContext['links'] }).links,
      progress: () => {},
    };
    const outcome = await tool.execute(tool.input.parse(input), context);
    if (!outcome.ok) throw new Error(`Seeding the study data: ${tool.id} failed: ${outcome.error.message}`);
  };
  return run;
}
