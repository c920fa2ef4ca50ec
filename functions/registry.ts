/**
 * Every tool, in catalog order. A tool's id is also its file name: functions/<toolset>/<id>.ts.
 */
import type { AnyTool } from '../shared/core/tool.ts';
import addDocument from './documents/add-document.ts';
import deleteDocument from './documents/delete-document.ts';
import embedTasks from './documents/embed-tasks.ts';
import replaceDocument from './documents/replace-document.ts';
import addPlanItem from './study/add-plan-item.ts';
import createFlashcard from './study/create-flashcard.ts';
import deleteQuizAttempt from './study/delete-quiz-attempt.ts';
import getDueFlashcards from './study/get-due-flashcards.ts';
import getMessages from './study/get-messages.ts';
import getWeakTopics from './study/get-weak-topics.ts';
import getWrongQuestions from './study/get-wrong-questions.ts';
import listPlanItems from './study/list-plan-items.ts';
import listPlans from './study/list-plans.ts';
import quizPostSave from './study/quiz-post-save.ts';
import quizPreFetch from './study/quiz-pre-fetch.ts';
import saveMessage from './study/save-message.ts';
import saveQuizAttempt from './study/save-quiz-attempt.ts';
import updateFlashcardReview from './study/update-flashcard-review.ts';
import updateItemStatus from './study/update-item-status.ts';
import updatePlanStatus from './study/update-plan-status.ts';
import writePlan from './study/write-plan.ts';
import logMood from './table-tools/log-mood.ts';
import logTelegramCheckin from './table-tools/log-telegram-checkin.ts';
import submitHealthForm from './table-tools/submit-health-form.ts';
import clusterBySimilarity from './task-analysis/cluster-by-similarity.ts';
import detectDependencies from './task-analysis/detect-dependencies.ts';
import getDocumentContext from './task-analysis/get-document-context.ts';
import queryTaskGraph from './task-analysis/query-task-graph.ts';
import semanticSearch from './task-analysis/semantic-search.ts';

// Not widened to AnyTool[]: each tool keeps its id and schemas in its type, for typed clients (functions/client.ts).
export const tools = [
  // Documents in
  addDocument,
  replaceDocument,
  deleteDocument,
  embedTasks,
  // Task analysis
  semanticSearch,
  getDocumentContext,
  detectDependencies,
  queryTaskGraph,
  clusterBySimilarity,
  // Table tools
  logMood,
  submitHealthForm,
  logTelegramCheckin,
  // Study planner: plans
  listPlans,
  listPlanItems,
  writePlan,
  addPlanItem,
  updateItemStatus,
  updatePlanStatus,
  // Study planner: quizzes
  saveQuizAttempt,
  getWrongQuestions,
  deleteQuizAttempt,
  getWeakTopics,
  quizPreFetch,
  quizPostSave,
  // Study planner: flashcards
  createFlashcard,
  getDueFlashcards,
  updateFlashcardReview,
  // Study planner: conversation memory
  saveMessage,
  getMessages,
] as const satisfies readonly AnyTool[];
