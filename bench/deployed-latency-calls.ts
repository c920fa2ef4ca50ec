/**
 * The calls bench/deployed-latency.ts times, and each one's physical minimum: the one Redis round
 * trip of admission plus the tool's essential database requests, each named with why it is
 * essential. A tool's essential requests are its own statements as the tool sends them (what a
 * bare handler doing the tool's work would send too); the pipeline's (the key's lookup, the
 * idempotency records, the trace) are not. The bench checks what it captures against the count
 * written here and says so when they differ.
 */
import { mcpToolCall } from './measure.ts';
import { createDb } from '../shared/runtime/db.ts';
import { tools } from '../functions/registry.ts';
import { resetExampleRecords } from '../local/example-records.ts';
import { STORY } from './code-mode-story.ts';
import type { Purpose } from './served-requests.ts';

type ToolId = (typeof tools)[number]['id'];

/** A call's minimum: Redis round trips, then the database round trips in turn, each named. */
export interface Minimum {
  redis: number;
  /** One entry per sequential database round trip (a statement, or a batch in one transaction). */
  database: string[];
  /** Why these are essential (and what is not counted). */
  why: string;
}

/** Each tool's essential database round trips, in order, and why: read from its code (functions/<toolset>/<id>.ts). */
export const ESSENTIAL: Record<ToolId, Pick<Minimum, 'database' | 'why'>> = {
  'add-document': {
    database: ['insert the document and its tasks (one transaction)', "store the tasks' embeddings"],
    why: "the vectors are stored after the rows, so that a provider's failure loses no document (documents/lib/ingest.ts)",
  },
  'replace-document': {
    database: [
      "check the document is the project's",
      'update it and replace its tasks (one transaction)',
      "store the new tasks' embeddings",
    ],
    why: 'NOT_FOUND is answered before anything is written; then as add-document',
  },
  'delete-document': { database: ['delete the document, its tasks and relationships, with a receipt (one statement)'], why: 'the write' },
  'embed-tasks': {
    database: ['read the tasks waiting for an embedding', 'count those still waiting'],
    why: 'with nothing waiting (the example, on embedded data) no vector is written; the count is what the answer reports',
  },
  'semantic-search': { database: ['search (one transaction: index settings, counts, nearest tasks)'], why: 'the read' },
  'get-document-context': {
    database: ["find the tasks' documents", "read the documents' sizes", 'read the chunk and its tasks (one transaction)'],
    why: 'each read needs what the one before found: the documents of the tasks, their chunk layout, then the chunk',
  },
  'detect-dependencies': {
    database: ['read the tasks', 'save the relationships found'],
    why: 'the relationships are detected in the worker from the tasks read',
  },
  'query-task-graph': {
    database: ['read the start task', 'walk the graph (one transaction: relationships, tasks)'],
    why: 'NOT_FOUND for an unknown start task is answered before the walk',
  },
  'cluster-by-similarity': { database: ['read the tasks with their embeddings'], why: 'the clustering runs in the worker' },
  'log-mood': {
    database: ['insert the row (one statement)'],
    why: "the write; the table's column lookup (information_schema, once per isolate every 5 minutes) is not counted",
  },
  'submit-health-form': { database: ['insert the row and read it back (one statement)'], why: 'as log-mood' },
  'log-telegram-checkin': { database: ['insert the row (one statement)'], why: 'as log-mood' },
  'list-plans': { database: ['read the plans with their item counts'], why: 'the read' },
  'list-plan-items': { database: ['find the plan by title', 'read its items'], why: 'the plan is named by title in the example' },
  'write-plan': { database: ['insert the plan and its items, read them back (one transaction)'], why: 'the write' },
  'add-plan-item': {
    database: ['find the plan ("latest")', 'insert the item and read it back (one transaction)'],
    why: 'the plan is named, not numbered, in the example',
  },
  'update-item-status': {
    database: ['find the plan by title', 'find the item by title', 'set the status with a receipt'],
    why: 'plan and item are named by title in the example, each looked up in turn',
  },
  'update-plan-status': { database: ['find the plan by title', 'set the status with a receipt'], why: 'the plan is named by title' },
  'save-quiz-attempt': { database: ['insert the attempt and read it back (one transaction)'], why: 'the write' },
  'get-wrong-questions': {
    database: ['find the topic by name', "read the topic's wrong answers"],
    why: 'the topic is named in the example',
  },
  'delete-quiz-attempt': { database: ['delete the attempt with a receipt (one statement)'], why: 'the write' },
  'get-weak-topics': { database: ["read the topics' scores"], why: 'the read' },
  'quiz-pre-fetch': {
    database: ['create or find the topic (one transaction)', 'read its wrong answers'],
    why: 'the answers are read for the topic the first statement gives',
  },
  'quiz-post-save': {
    database: ['check the topic and the attempts named', 'save the wrong answers, delete the corrected ones (one transaction)'],
    why: 'NOT_FOUND is answered before anything is written',
  },
  'create-flashcard': { database: ['insert the card and read it back (one transaction)'], why: 'the write' },
  'get-due-flashcards': { database: ['read the due cards and the next due time (one transaction)'], why: 'the read' },
  'update-flashcard-review': {
    database: ["read the card's schedule", 'record the review and the new schedule (one transaction)'],
    why: "the new schedule is computed in the worker (ts-fsrs) from the card's",
  },
  'save-message': { database: ['insert the message (and its session), read it back (one transaction)'], why: 'the write' },
  'get-messages': { database: ['read the messages'], why: 'the read' },
};

/** What a call is sent with, and how the bench reaches the database for the untimed preparation of a call. */
export interface CallContext {
  /** The gateway's origin. */
  base: string;
  databaseUrl: string;
  projectId: string;
  /** An API key of the project used only for preparation (never timed). */
  setupKey: string;
}

/** One request to send. */
export interface CallRequest {
  path: string;
  init: RequestInit;
}

/** Which credential a call is timed with: an API key or an OAuth access token, last verified 1 s ago or more (`paced`), or just now (`warm`). */
export type Credential = { kind: 'key' | 'token'; freshness: 'paced' | 'warm' };

/** A row of the bench. */
export interface Call {
  name: string;
  credential: Credential;
  minimum: Minimum;
  /** Untimed work before sample `i` (records the call consumes); answers what {@link request} needs. */
  prepare?(i: number): Promise<unknown>;
  request(i: number, bearer: string, prepared: unknown): CallRequest;
  /** Whether the answer is the one the call is meant to get (anything else times the wrong work). */
  succeeded(status: number, body: string): boolean;
  /** The database requests the bare peer runs (by default the tool's own statements). */
  peerRuns: ReadonlySet<Purpose>;
}

const TOOL_STATEMENTS: ReadonlySet<Purpose> = new Set(['tool']);
const json = (bearer: string, headers: Record<string, string> = {}) => ({
  authorization: `Bearer ${bearer}`,
  'content-type': 'application/json',
  ...headers,
});
const post = (path: string, bearer: string, body: unknown, headers: Record<string, string> = {}): CallRequest => ({
  path,
  init: { method: 'POST', headers: json(bearer, headers), body: JSON.stringify(body) },
});
const envelopeSucceeded = (status: number, body: string) => status === 200 && (JSON.parse(body) as { success?: boolean }).success === true;

/** A stateless MCP `tools/call` (one HTTP request). */
function mcpCall(bearer: string, name: string, args: unknown): CallRequest {
  const { body, headers } = mcpToolCall(name, args);
  return post('/mcp', bearer, body, headers);
}

/** An API key last verified 1 s ago or more: what most calls are timed with. */
const PACED_KEY: Credential = { kind: 'key', freshness: 'paced' };

/** A timestamp of its own per sample (log-mood refuses a second entry for the same user and minute). */
const minute = (i: number, base = Date.UTC(2031, 0, 1)) => new Date(base + i * 60_000).toISOString().replace('.000', '');

/** The calls the bench times, in the order it prints them: each tool's example, then the other surfaces. */
export function calls(context: CallContext): Call[] {
  const toolCalls = exampleCalls(context);
  return [...toolCalls, ...surfaceCalls(context, toolCalls)];
}

/**
 * One call per tool, with its example (reset or prepared, untimed, where the example cannot be
 * sent twice as it is), in catalog order.
 */
function exampleCalls(context: CallContext): Call[] {
  const db = createDb(context.databaseUrl);
  const setup = async (id: ToolId, input: unknown) => {
    const response = await fetch(`${context.base}/tools/${id}`, {
      method: 'POST',
      headers: json(context.setupKey),
      body: JSON.stringify(input),
    });
    const text = await response.text();
    if (!envelopeSucceeded(response.status, text))
      throw new Error(`preparing a call, ${id} answered ${response.status}: ${text.slice(0, 300)}`);
    return (JSON.parse(text) as { data: Record<string, unknown> }).data;
  };
  const namesExampleRecords = new Set<ToolId>([
    'replace-document',
    'delete-document',
    'get-document-context',
    'detect-dependencies',
    'query-task-graph',
    'cluster-by-similarity',
  ]);
  /** Inputs and preparation where the example cannot be sent twice as it is. */
  const special: Partial<Record<ToolId, Pick<Call, 'prepare' | 'request'>>> = {
    'log-mood': { request: (i, bearer) => post('/tools/log-mood', bearer, { ...toolOf('log-mood').example, timestamp: minute(i) }) },
    'delete-quiz-attempt': {
      prepare: () => setup('save-quiz-attempt', { question: 'Bench question', user_answer: 'x', score: 0 }),
      request: (_i, bearer, made) =>
        post('/tools/delete-quiz-attempt', bearer, { attempt_id: (made as { attempt_id: number }).attempt_id }),
    },
    'quiz-post-save': {
      prepare: () => setup('save-quiz-attempt', { topic_id: 1, question: 'Bench question', user_answer: 'x', score: 0 }),
      request: (_i, bearer, made) =>
        post('/tools/quiz-post-save', bearer, {
          ...toolOf('quiz-post-save').example,
          correct_retries: [(made as { attempt_id: number }).attempt_id],
        }),
    },
  };
  return tools.map((tool): Call => ({
    name: tool.id,
    credential: PACED_KEY,
    minimum: { redis: 1, ...(ESSENTIAL[tool.id as ToolId] as Pick<Minimum, 'database' | 'why'>) },
    prepare: namesExampleRecords.has(tool.id) ? () => resetExampleRecords(db, context.projectId) : undefined,
    request: (_i, bearer) => post(`/tools/${tool.id}`, bearer, tool.example),
    ...special[tool.id],
    succeeded: envelopeSucceeded,
    peerRuns: TOOL_STATEMENTS,
  }));
}

/**
 * The surfaces beyond a tool's plain call, made of `toolCalls`' log-mood and list-plans: an
 * idempotency key (first call and replay), MCP, an OAuth token, code mode, and warm credentials.
 */
function surfaceCalls(context: CallContext, toolCalls: Call[]): Call[] {
  const logMood = toolCalls.find((call) => call.name === 'log-mood')!;
  const listPlans = toolCalls.find((call) => call.name === 'list-plans')!;
  /** log-mood with a fresh key per sample (its own minute from 10,000 on, apart from the other rows'). */
  const keyed = (i: number, bearer: string) =>
    post(
      '/tools/log-mood',
      bearer,
      { ...toolOf('log-mood').example, timestamp: minute(10_000 + i) },
      { 'idempotency-key': `"bench-${i}"` },
    );
  return [
    {
      ...logMood,
      name: 'log-mood with an Idempotency-Key, first call',
      minimum: {
        redis: 1,
        database: ['claim the key, insert the row and store the answer (one transaction)'],
        why: 'the claim, the write and the stored answer can be one transaction: no round trip beyond the write',
      },
      request: keyed,
    },
    {
      ...logMood,
      name: 'log-mood with an Idempotency-Key, replay',
      minimum: { redis: 0, database: ['read the stored answer'], why: 'a replay runs nothing, so it needs no slot' },
      // The first call, untimed, by another key of the project: the replay's key is due for its re-check.
      prepare: async (i) => {
        const first = keyed(20_000 + i, context.setupKey);
        const response = await fetch(context.base + first.path, first.init);
        if (!envelopeSucceeded(response.status, await response.text()))
          throw new Error(`the first keyed log-mood answered ${response.status}`);
      },
      request: (i, bearer) => keyed(20_000 + i, bearer),
      peerRuns: new Set(['idempotency claim']),
    },
    {
      ...listPlans,
      name: 'MCP tools/call of list-plans',
      request: (_i, bearer) => mcpCall(bearer, 'list-plans', toolOf('list-plans').example),
      succeeded: (status, body) => status === 200 && (JSON.parse(body) as { result?: { isError?: boolean } }).result?.isError === false,
    },
    { ...listPlans, name: 'list-plans with an OAuth access token', credential: { kind: 'token', freshness: 'paced' } },
    {
      name: 'code mode: the seed story (POST /code, bench/code-mode-story.ts)',
      credential: PACED_KEY,
      minimum: {
        redis: 2,
        database: [
          'semantic-search: search (one transaction)',
          "get-document-context: find the tasks' documents",
          "get-document-context: read the documents' sizes",
          'get-document-context: read the chunk and its tasks (one transaction)',
        ],
        why: "semantic-search, then get-document-context, detect-dependencies (2 round trips) and cluster-by-similarity (1) in parallel: each step's one Redis round trip and its longest call",
      },
      request: (_i, bearer) => post('/code', bearer, { code: STORY }),
      succeeded: envelopeSucceeded,
      peerRuns: TOOL_STATEMENTS,
    },
    { ...listPlans, name: 'list-plans, the key verified just before (warm)', credential: { kind: 'key', freshness: 'warm' } },
    { ...logMood, name: 'log-mood, the key verified just before (warm)', credential: { kind: 'key', freshness: 'warm' } },
    {
      ...listPlans,
      name: 'list-plans with an OAuth access token, the grant read just before (warm)',
      credential: { kind: 'token', freshness: 'warm' },
    },
  ];
}

function toolOf<Id extends ToolId>(id: Id) {
  return tools.find((tool) => tool.id === id)!;
}
