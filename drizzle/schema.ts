/**
 * The database schema. Every tenant-owned row carries `project_id`, and every query filters by it.
 * Migrations are generated from this file by drizzle-kit into drizzle/migrations. One file of some
 * 600 lines on purpose: it is the whole schema, each table with its constraints and indexes beside
 * its columns, read as one (by drizzle-kit too, drizzle.config.ts).
 */
import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  date,
  doublePrecision,
  foreignKey,
  index,
  integer,
  json,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  real,
  text,
  timestamp,
  unique,
  uniqueIndex,
  uuid,
  varchar,
  vector,
} from 'drizzle-orm/pg-core';

const id = () => uuid('id').primaryKey().defaultRandom();
const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();
const projectId = () =>
  uuid('project_id')
    .notNull()
    .references(() => projects.id, { onDelete: 'cascade' });

/** Tenants. */
export const projects = pgTable('projects', {
  id: id(),
  name: text('name').notNull(),
  /** Calls per minute allowed for each of the project's API keys; null means the deployment default. */
  rateLimitPerMinute: integer('rate_limit_per_minute'),
  createdAt: createdAt(),
});

/** API keys, stored as SHA-256 hashes; each key belongs to one project. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: id(),
    projectId: projectId(),
    keyHash: text('key_hash').notNull().unique(),
    /** The first characters of the key, to recognise it in listings without storing it. */
    keyPrefix: text('key_prefix').notNull(),
    name: text('name').notNull(),
    /** The toolsets the key may list and run; null for every toolset. */
    toolsets: text('toolsets').array(),
    createdAt: createdAt(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('api_keys_project_idx').on(t.projectId)],
);

/**
 * The deployment's secret for signing API keys (shared/auth/keys.ts): one row, made by the
 * migration that creates the table. A key carrying its tag was issued here, so it is looked up
 * whatever else its client address sent. Rotating it (a new row) leaves the keys issued before as
 * unsigned ones: they keep working, within the per-address bound on unknown keys.
 */
export const apiKeySigning = pgTable(
  'api_key_signing',
  {
    id: integer('id').primaryKey().default(1),
    secret: text('secret').notNull(),
    createdAt: createdAt(),
  },
  (t) => [check('api_key_signing_one_row', sql`${t.id} = 1`)],
);

/**
 * What a person approved for an OAuth client (an MCP client connecting by URL): the project, the
 * toolsets and whether it may write. The protocol's state (clients, codes, tokens) lives in the
 * OAUTH_KV namespace; this row is what is listed and revoked, and every token of the grant is
 * checked against it (shared/auth/grants.ts).
 */
export const oauthGrants = pgTable(
  'oauth_grants',
  {
    id: id(),
    projectId: projectId(),
    /** The API key whose holder approved it: revoking the key stops the grant too. */
    apiKeyId: uuid('api_key_id')
      .notNull()
      .references(() => apiKeys.id, { onDelete: 'cascade' }),
    /** The OAuth client: its id, the name it registered and the host its redirect URI goes to. */
    clientId: text('client_id').notNull(),
    clientName: text('client_name').notNull(),
    redirectHost: text('redirect_host').notNull(),
    /** The MCP URL the grant's tokens are bound to (RFC 8707), e.g. https://…/mcp/study. */
    resource: text('resource').notNull(),
    toolsets: text('toolsets').array().notNull(),
    readOnly: boolean('read_only').notNull(),
    createdAt: createdAt(),
    /** When its refresh token stops working (the grant's lifetime). */
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('oauth_grants_project_idx').on(t.projectId)],
);

/** Markdown documents whose checkbox items become tasks. */
export const documents = pgTable(
  'documents',
  {
    id: id(),
    projectId: projectId(),
    title: text('title').notNull(),
    content: text('content').notNull(),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('documents_project_idx').on(t.projectId)],
);

export const EMBEDDING_DIMENSIONS = 1536;

/** The HNSW index over `tasks.embedding`, by name: semantic-search asks the catalog how large it is. */
export const SEARCH_INDEX = 'tasks_embedding_hnsw_idx';

export const tasks = pgTable(
  'tasks',
  {
    id: id(),
    projectId: projectId(),
    documentId: uuid('document_id')
      .notNull()
      .references(() => documents.id, { onDelete: 'cascade' }),
    text: text('text').notNull(),
    position: integer('position').notNull(),
    /**
     * Where the task's line starts in its document's content, in characters (code points, as
     * Postgres' substr counts them): which chunk of a long document holds the task. Null only for
     * rows written before the column existed, until the migration script fills them in.
     */
    contentOffset: integer('content_offset'),
    embedding: vector('embedding', { dimensions: EMBEDDING_DIMENSIONS }),
    /** The provider that made the vector: vectors of different providers are never compared. */
    embeddingModel: text('embedding_model'),
    embeddingStatus: text('embedding_status', { enum: ['pending', 'completed', 'failed'] })
      .notNull()
      .default('pending'),
    embeddingError: text('embedding_error'),
    createdAt: createdAt(),
  },
  (t) => [
    index('tasks_project_document_idx').on(t.projectId, t.documentId, t.position),
    // Approximate nearest neighbours for semantic-search over large projects, with the operator class
    // of `<=>` (cosine distance). In bench/search-at-scale.ts (100,000 clustered vectors, ef_search
    // 1000) pgvector's defaults (m 16, ef_construction 64) let the worst query fall to recall@20
    // 0.90; ef_construction 128 gave 0.90 to 0.95 over three builds (each build's graph differs); m 24
    // with it, 0.95. The price: slower builds and inserts. Zero vectors are not indexed.
    index(SEARCH_INDEX).using('hnsw', t.embedding.op('vector_cosine_ops')).with({ m: 24, ef_construction: 128 }),
    check('tasks_embedding_status_check', sql`${t.embeddingStatus} in ('pending', 'completed', 'failed')`),
  ],
);

export const taskRelationships = pgTable(
  'task_relationships',
  {
    id: id(),
    projectId: projectId(),
    sourceTaskId: uuid('source_task_id')
      .notNull()
      .references(() => tasks.id, { onDelete: 'cascade' }),
    targetTaskId: uuid('target_task_id')
      .notNull()
      .references(() => tasks.id, { onDelete: 'cascade' }),
    type: text('type', { enum: ['prerequisite', 'blocks', 'related'] }).notNull(),
    confidence: real('confidence').notNull(),
    detectionMethod: text('detection_method').notNull(),
    rationale: text('rationale').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    unique('task_relationships_edge_unique').on(t.projectId, t.sourceTaskId, t.targetTaskId, t.type),
    index('task_relationships_target_idx').on(t.projectId, t.targetTaskId),
    check('task_relationships_type_check', sql`${t.type} in ('prerequisite', 'blocks', 'related')`),
  ],
);

/**
 * What a write that a retry cannot read back from the rows did (a delete leaves no row behind, an
 * overwrite loses the value it replaced), written in the same statement as the write under an id
 * derived from the call (`context.idFor`): a retry whose write finds nothing left to do recognises
 * its own earlier attempt by its receipt and answers what that attempt did
 * (shared/records/receipts.ts). Receipts older than a day are purged (shared/runtime/idempotency.ts).
 */
export const writeReceipts = pgTable(
  'write_receipts',
  {
    id: uuid('id').primaryKey(),
    projectId: projectId(),
    /** What the write's answer needs, e.g. `{ deleted_task_count }`, `{ deleted_attempt_ids }`, `{ previous_status }`. */
    result: jsonb('result').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('write_receipts_created_idx').on(t.createdAt)],
);

/**
 * Idempotency-Key records (shared/runtime/idempotency.ts): the first call with a key claims it,
 * runs, and stores its answer; the same key and input replay that answer until `expires_at`.
 * Scoped to the project and the tool.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    projectId: projectId(),
    tool: text('tool').notNull(),
    key: text('key').notNull(),
    /** SHA-256 of the validated input (canonical JSON): the same key with another input is refused. */
    fingerprint: text('fingerprint').notNull(),
    /** `running` while the claiming call executes (until `locked_until`), then `completed`. */
    status: text('status', { enum: ['running', 'completed'] }).notNull(),
    /** The call holding the claim, then the call whose answer is stored: its trace id. */
    traceId: uuid('trace_id').notNull(),
    /** A running claim not completed by then was abandoned (the worker died): another call may take it over. */
    lockedUntil: timestamp('locked_until', { withTimezone: true }),
    /**
     * The stored answer: the outcome (data and message, or the error), never the cause. `json`, not
     * `jsonb`, like the trace: it keeps whatever text an answer holds, as it was.
     */
    response: json('response'),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ name: 'idempotency_keys_pkey', columns: [t.projectId, t.tool, t.key] }),
    index('idempotency_keys_expires_idx').on(t.expiresAt),
    check('idempotency_keys_status_check', sql`${t.status} in ('running', 'completed')`),
  ],
);

/**
 * The trace: one row per execution, written off the response's critical path. Input, output and
 * error are `json`, which keeps the JSON text as written: whatever they contain (a NUL or an
 * unpaired surrogate in an output or an error message, which `jsonb` refuses), the row is written
 * and reads back exactly.
 */
export const toolExecutions = pgTable(
  'tool_executions',
  {
    /** The trace id returned to the caller in `meta.trace_id`. */
    id: uuid('id').primaryKey(),
    projectId: uuid('project_id').references(() => projects.id, { onDelete: 'cascade' }),
    tool: text('tool').notNull(),
    status: text('status', { enum: ['success', 'error'] }).notNull(),
    errorCode: text('error_code'),
    input: json('input'),
    output: json('output'),
    /** The full error, stack included: kept here, never sent to the caller. */
    error: json('error'),
    durationMs: real('duration_ms').notNull(),
    attempts: integer('attempts').notNull(),
    queuedMs: real('queued_ms').notNull(),
    performanceWarning: boolean('performance_warning').notNull(),
    /** When the call arrived (the execution's time in listings, metrics and retention). */
    createdAt: createdAt(),
    /** The actor: the API key that made the call (its id, never the key). */
    apiKeyId: uuid('api_key_id').references(() => apiKeys.id, { onDelete: 'set null' }),
    /**
     * Each failed attempt that was retried: `{ attempt, code, message, timeMs, cause }`, stack
     * included. `json`, not `jsonb`: an error message may quote text `jsonb` refuses (a NUL).
     */
    retryErrors: json('retry_errors'),
    /** What the answer's `meta.warnings` said (`lease_lost`, `rounded`, ...), in order; null when it said none. */
    warnings: json('warnings'),
    /** W3C trace context: the trace (the caller's, or this execution's own), this span, the caller's span. */
    otelTraceId: text('otel_trace_id'),
    otelSpanId: text('otel_span_id'),
    otelParentSpanId: text('otel_parent_span_id'),
    /** For a tool call made by code mode's code (shared/codemode/): the trace id of that code's execution. */
    parentExecutionId: uuid('parent_execution_id'),
  },
  (t) => [
    // The calls one code-mode execution made (GET /executions?execution=<trace id>).
    index('tool_executions_project_parent_idx')
      .on(t.projectId, t.parentExecutionId)
      .where(sql`${t.parentExecutionId} is not null`),
    // Newest first, per project (GET /executions, GET /metrics over a window).
    index('tool_executions_project_created_idx').on(t.projectId, t.createdAt, t.id),
    index('tool_executions_project_tool_created_idx').on(t.projectId, t.tool, t.createdAt, t.id),
    // Failures are few among many successes: the dashboard's recent failures read this one.
    index('tool_executions_project_failures_idx')
      .on(t.projectId, t.createdAt, t.id)
      .where(sql`${t.status} = 'error'`),
    index('tool_executions_project_otel_trace_idx').on(t.projectId, t.otelTraceId),
    // Slow calls are few: min_duration_ms finds them here instead of walking every execution.
    index('tool_executions_project_duration_idx').on(t.projectId, t.durationMs),
    // Retention deletes the oldest rows of every project.
    index('tool_executions_created_idx').on(t.createdAt),
  ],
);

/**
 * Calls refused after authentication without executing (validation, payload too large, rate
 * limit, no slot): not executions, but counted by GET /metrics. Written off the critical path.
 */
export const toolRefusals = pgTable(
  'tool_refusals',
  {
    /** The trace id returned to the caller in `meta.trace_id`. */
    id: uuid('id').primaryKey(),
    projectId: projectId(),
    apiKeyId: uuid('api_key_id').references(() => apiKeys.id, { onDelete: 'set null' }),
    tool: text('tool').notNull(),
    /** VALIDATION_ERROR, PAYLOAD_TOO_LARGE, RATE_LIMITED or BUSY. */
    code: text('code').notNull(),
    /** The refusal's message and, for invalid input, its field problems (`{ field, code, message }`). */
    reason: json('reason'),
    createdAt: createdAt(),
    /** For a tool call made by code mode's code: the trace id of that code's execution. */
    parentExecutionId: uuid('parent_execution_id'),
  },
  (t) => [index('tool_refusals_project_created_idx').on(t.projectId, t.createdAt), index('tool_refusals_created_idx').on(t.createdAt)],
);

/**
 * Cumulative counters of every call, for Prometheus (shared/observability/counters.ts): one row
 * per project, tool and series, added to in the statement batch that writes the execution (or the
 * refusal). They only grow: retention never deletes them, so counts survive the trace they came
 * from. `le` is a histogram bucket's upper bound in seconds (Infinity for the last; 0 for series
 * that are not buckets); each bucket row counts only its own observations, and the exposition
 * makes them cumulative.
 */
export const toolCounters = pgTable(
  'tool_counters',
  {
    projectId: projectId(),
    tool: text('tool').notNull(),
    /** calls, duration_bucket, duration_sum, queue_wait_bucket, queue_wait_sum, retries, slow_calls, lease_warnings. */
    name: text('name').notNull(),
    /** success, failure or refused (calls only). */
    outcome: text('outcome').notNull().default(''),
    /** The error code (failed and refused calls only). */
    code: text('code').notNull().default(''),
    le: doublePrecision('le').notNull().default(0),
    value: doublePrecision('value').notNull(),
  },
  (t) => [primaryKey({ name: 'tool_counters_pk', columns: [t.projectId, t.tool, t.name, t.outcome, t.code, t.le] })],
);

// ---------------------------------------------------------------------------------------------
// Target tables of the table tools (functions/table-tools). project_id is filled from the API key.

export const moodEntries = pgTable(
  'mood_entries',
  {
    id: id(),
    projectId: projectId(),
    userId: text('user_id').notNull(),
    mood: text('mood', { enum: ['happy', 'sad', 'neutral', 'anxious'] }).notNull(),
    energyLevel: integer('energy_level').notNull(),
    notes: varchar('notes', { length: 500 }),
    timestamp: timestamp('timestamp', { withTimezone: true }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    // Unique per tenant: a project-wide constraint would reveal other tenants' rows.
    unique('mood_entries_user_timestamp_unique').on(t.projectId, t.userId, t.timestamp),
    check('mood_entries_energy_level_check', sql`${t.energyLevel} between 1 and 10`),
  ],
);

export const healthForms = pgTable('health_forms', {
  id: id(),
  projectId: projectId(),
  patientName: text('patient_name').notNull(),
  age: integer('age').notNull(),
  weightKg: numeric('weight_kg', { precision: 5, scale: 2 }).notNull(),
  smoker: boolean('smoker').notNull(),
  bloodType: text('blood_type').notNull(),
  recordedAt: timestamp('recorded_at', { withTimezone: true }).notNull(),
  symptoms: jsonb('symptoms'),
  notes: text('notes'),
  createdAt: createdAt(),
});

export const telegramCheckins = pgTable('telegram_checkins', {
  id: id(),
  projectId: projectId(),
  telegramUserId: text('telegram_user_id').notNull(),
  status: text('status').notNull(),
  message: text('message'),
  checkedInAt: timestamp('checked_in_at', { withTimezone: true }).notNull(),
  createdAt: createdAt(),
});

// ---------------------------------------------------------------------------------------------
// The study planner (functions/study): plans and their items, quiz topics and attempts, flashcards
// with their FSRS scheduling state, and conversation memory.
//
// Ids are integers numbered per project (plan 1, 2, 3 … in every project), allocated from
// `study_counters`: the primary key is (project_id, id), and every reference carries project_id
// too, so a row can only ever point at rows of its own project. Rows created by a tool carry the
// call's `request_id` (unique per project): a retried attempt of the same call finds its own row
// instead of writing a second one.

/** Statuses of a study plan. */
export const PLAN_STATUSES = ['active', 'paused', 'completed', 'archived'] as const;
/** Statuses of a plan item. */
export const ITEM_STATUSES = ['pending', 'in_progress', 'completed', 'skipped'] as const;
/** Authors of a conversation message. */
export const MESSAGE_ROLES = ['user', 'assistant', 'system', 'tool'] as const;
/** FSRS card states (ts-fsrs `State`, lower-cased). */
export const CARD_STATES = ['new', 'learning', 'review', 'relearning'] as const;
/** What changed a card's schedule: a graded review (ts-fsrs `Rating`), or explicit overrides. */
export const REVIEW_RATINGS = ['again', 'hard', 'good', 'easy', 'manual'] as const;
/** The kinds of study record numbered per project. */
export const STUDY_ENTITIES = ['plan', 'plan_item', 'topic', 'quiz_attempt', 'flashcard', 'message'] as const;

const inList = (column: unknown, values: readonly string[]) =>
  sql.join([
    sql`${column} in (`,
    sql.join(
      values.map((v) => sql.raw(`'${v}'`)),
      sql`, `,
    ),
    sql`)`,
  ]);
const localId = () => integer('id').notNull();
const requestId = () => uuid('request_id');
const updatedAt = () => timestamp('updated_at', { withTimezone: true }).notNull().defaultNow();

/** The last id handed out per project and kind of record. */
export const studyCounters = pgTable(
  'study_counters',
  {
    projectId: projectId(),
    entity: text('entity', { enum: STUDY_ENTITIES }).notNull(),
    lastId: integer('last_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.entity] }), check('study_counters_entity_check', inList(t.entity, STUDY_ENTITIES))],
);

export const studyPlans = pgTable(
  'study_plans',
  {
    projectId: projectId(),
    id: localId(),
    title: text('title').notNull(),
    status: text('status', { enum: PLAN_STATUSES }).notNull().default('active'),
    requestId: requestId(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.id] }),
    unique('study_plans_request_unique').on(t.projectId, t.requestId),
    // Title lookups are exact and case-insensitive.
    index('study_plans_title_idx').on(t.projectId, sql`lower(${t.title})`),
    check('study_plans_status_check', inList(t.status, PLAN_STATUSES)),
  ],
);

export const studyPlanItems = pgTable(
  'study_plan_items',
  {
    projectId: projectId(),
    id: localId(),
    planId: integer('plan_id').notNull(),
    /** Order within the plan: write-plan's order, then appended items. */
    position: integer('position').notNull(),
    title: text('title').notNull(),
    status: text('status', { enum: ITEM_STATUSES }).notNull().default('pending'),
    dueDate: date('due_date'),
    notes: text('notes'),
    requestId: requestId(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.id] }),
    foreignKey({ columns: [t.projectId, t.planId], foreignColumns: [studyPlans.projectId, studyPlans.id] }).onDelete('cascade'),
    unique('study_plan_items_request_unique').on(t.projectId, t.requestId),
    index('study_plan_items_plan_idx').on(t.projectId, t.planId, t.position),
    index('study_plan_items_title_idx').on(t.projectId, sql`lower(${t.title})`),
    check('study_plan_items_status_check', inList(t.status, ITEM_STATUSES)),
  ],
);

/** Quiz topics; names are unique per project, case-insensitively. */
export const studyTopics = pgTable(
  'study_topics',
  {
    projectId: projectId(),
    id: localId(),
    name: text('name').notNull(),
    /** The call that created the topic (quiz-pre-fetch creates a topic the first time its name is used). */
    requestId: requestId(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.id] }),
    uniqueIndex('study_topics_name_unique').on(t.projectId, sql`lower(${t.name})`),
    unique('study_topics_request_unique').on(t.projectId, t.requestId),
  ],
);

export const quizAttempts = pgTable(
  'quiz_attempts',
  {
    projectId: projectId(),
    id: localId(),
    topicId: integer('topic_id'),
    question: text('question').notNull(),
    userAnswer: text('user_answer'),
    /** 0 to 1; null when the attempt was not graded. Below the pass mark (functions/study/lib/quiz.ts) it is wrong. */
    score: doublePrecision('score'),
    feedback: text('feedback'),
    requestId: requestId(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.id] }),
    foreignKey({ columns: [t.projectId, t.topicId], foreignColumns: [studyTopics.projectId, studyTopics.id] }),
    unique('quiz_attempts_request_unique').on(t.projectId, t.requestId),
    index('quiz_attempts_topic_idx').on(t.projectId, t.topicId, t.id),
    check('quiz_attempts_score_check', sql`${t.score} between 0 and 1`),
  ],
);

/** Flashcards with their full FSRS state (ts-fsrs `Card`), so scheduling is exactly the library's. */
export const flashcards = pgTable(
  'flashcards',
  {
    projectId: projectId(),
    id: localId(),
    topicId: integer('topic_id'),
    front: text('front').notNull(),
    back: text('back').notNull(),
    due: timestamp('due', { withTimezone: true }).notNull(),
    stability: doublePrecision('stability').notNull(),
    difficulty: doublePrecision('difficulty').notNull(),
    elapsedDays: integer('elapsed_days').notNull(),
    scheduledDays: integer('scheduled_days').notNull(),
    learningSteps: integer('learning_steps').notNull(),
    reps: integer('reps').notNull(),
    lapses: integer('lapses').notNull(),
    state: text('state', { enum: CARD_STATES }).notNull(),
    lastReview: timestamp('last_review', { withTimezone: true }),
    /** Bumped by every change of schedule: a review computed from a stale state is refused. */
    revision: integer('revision').notNull().default(0),
    requestId: requestId(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.id] }),
    foreignKey({ columns: [t.projectId, t.topicId], foreignColumns: [studyTopics.projectId, studyTopics.id] }),
    unique('flashcards_request_unique').on(t.projectId, t.requestId),
    index('flashcards_due_idx').on(t.projectId, t.due, t.id),
    check('flashcards_state_check', inList(t.state, CARD_STATES)),
  ],
);

/** Every change of a card's schedule, with the state it left the card in; one per call. */
export const flashcardReviews = pgTable(
  'flashcard_reviews',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    projectId: projectId(),
    cardId: integer('card_id').notNull(),
    requestId: uuid('request_id').notNull(),
    rating: text('rating', { enum: REVIEW_RATINGS }).notNull(),
    reviewedAt: timestamp('reviewed_at', { withTimezone: true }).notNull(),
    due: timestamp('due', { withTimezone: true }).notNull(),
    stability: doublePrecision('stability').notNull(),
    difficulty: doublePrecision('difficulty').notNull(),
    scheduledDays: integer('scheduled_days').notNull(),
    reps: integer('reps').notNull(),
    lapses: integer('lapses').notNull(),
    state: text('state', { enum: CARD_STATES }).notNull(),
    /** The ease factor an override asked for, as the card's FSRS difficulty now gives it. */
    easeFactor: doublePrecision('ease_factor'),
  },
  (t) => [
    foreignKey({ columns: [t.projectId, t.cardId], foreignColumns: [flashcards.projectId, flashcards.id] }).onDelete('cascade'),
    unique('flashcard_reviews_request_unique').on(t.projectId, t.requestId),
    index('flashcard_reviews_card_idx').on(t.projectId, t.cardId),
    check('flashcard_reviews_rating_check', inList(t.rating, REVIEW_RATINGS)),
  ],
);

/** Conversations, named by the caller's `session_id`. */
export const chatSessions = pgTable(
  'chat_sessions',
  {
    projectId: projectId(),
    sessionId: text('session_id').notNull(),
    createdAt: createdAt(),
    lastMessageAt: timestamp('last_message_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.sessionId] })],
);

export const chatMessages = pgTable(
  'chat_messages',
  {
    projectId: projectId(),
    id: localId(),
    sessionId: text('session_id').notNull(),
    role: text('role', { enum: MESSAGE_ROLES }).notNull(),
    content: text('content').notNull(),
    requestId: requestId(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.id] }),
    foreignKey({ columns: [t.projectId, t.sessionId], foreignColumns: [chatSessions.projectId, chatSessions.sessionId] }).onDelete(
      'cascade',
    ),
    unique('chat_messages_request_unique').on(t.projectId, t.requestId),
    index('chat_messages_session_idx').on(t.projectId, t.sessionId, t.id),
    check('chat_messages_role_check', inList(t.role, MESSAGE_ROLES)),
  ],
);
