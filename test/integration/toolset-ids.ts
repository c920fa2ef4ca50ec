/**
 * The tool ids of each toolset, written out by hand from the folders of functions/: what the
 * listings are judged against, so never read from the registry the gateway lists from. Shared by
 * toolsets.test.ts and key-toolsets.test.ts.
 */
export const STUDY = [
  'list-plans',
  'list-plan-items',
  'write-plan',
  'add-plan-item',
  'update-item-status',
  'update-plan-status',
  'save-quiz-attempt',
  'get-wrong-questions',
  'delete-quiz-attempt',
  'get-weak-topics',
  'quiz-pre-fetch',
  'quiz-post-save',
  'create-flashcard',
  'get-due-flashcards',
  'update-flashcard-review',
  'save-message',
  'get-messages',
];
export const DOCUMENTS = ['add-document', 'replace-document', 'delete-document', 'embed-tasks'];
export const TASK_ANALYSIS = [
  'semantic-search',
  'get-document-context',
  'detect-dependencies',
  'query-task-graph',
  'cluster-by-similarity',
];
export const TABLE_TOOLS = ['log-mood', 'submit-health-form', 'log-telegram-checkin'];
