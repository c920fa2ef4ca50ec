/**
 * The database schema. Every tenant-owned row carries `project_id`, and every query filters by it.
 * Migrations are generated from this file by drizzle-kit into drizzle/migrations.
 */
import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  real,
  text,
  timestamp,
  unique,
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
    createdAt: createdAt(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('api_keys_project_idx').on(t.projectId)],
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

/** The trace: one row per execution, written off the response's critical path. */
export const toolExecutions = pgTable(
  'tool_executions',
  {
    /** The trace id returned to the caller in `meta.trace_id`. */
    id: uuid('id').primaryKey(),
    projectId: uuid('project_id').references(() => projects.id, { onDelete: 'cascade' }),
    tool: text('tool').notNull(),
    status: text('status', { enum: ['success', 'error'] }).notNull(),
    errorCode: text('error_code'),
    input: jsonb('input'),
    output: jsonb('output'),
    /** The full error, stack included: kept here, never sent to the caller. */
    error: jsonb('error'),
    durationMs: real('duration_ms').notNull(),
    attempts: integer('attempts').notNull(),
    queuedMs: real('queued_ms').notNull(),
    performanceWarning: boolean('performance_warning').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('tool_executions_project_created_idx').on(t.projectId, t.createdAt)],
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
