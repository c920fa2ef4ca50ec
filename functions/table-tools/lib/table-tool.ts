/**
 * Generates an insert tool from a {@link TableConfig}: a strict input schema by the rules of
 * input-schema.ts, and an execute that maps fields to columns and inserts one row with parameters
 * only. Table and column identifiers come from the validated configuration, checked against the
 * live table, never from input.
 *
 * Safe to retry: the row's `id` is derived from the call (`context.idFor('row')`) and the insert
 * yields to a row that already has it, so a retry after a committed insert whose answer was lost
 * recognises its own row: no second row, and no false CONFLICT from the table's other unique
 * constraints (the `id` conflict is checked first and ends the insert).
 */
import { sql, type SQL } from 'drizzle-orm';
import * as z from 'zod';
import { fail, ok, type Failure, type Warning } from '../../../shared/core/contract.ts';
import { databaseFailure, type Database } from '../../../shared/core/database.ts';
import { linkLabel } from '../../../shared/core/links.ts';
import { plural } from '../../../shared/core/plural.ts';
import { log } from '../../../shared/core/log.ts';
import { defineTool, READ_ONLY, TOOL_ID_PATTERN, type AnyTool } from '../../../shared/core/tool.ts';
import { buildExample, buildInputSchema } from './input-schema.ts';
import {
  columnOf,
  ROW_ID_COLUMN,
  TENANT_COLUMN,
  tableConfigSchema,
  type FieldConfig,
  type TableConfig,
  type ValidTableConfig,
} from './table-config.ts';

/** How long a table's verified column list is trusted before it is read again. */
const COLUMN_CACHE_TTL_MS = 5 * 60_000;

const insertResult = z.object({
  id: z.string().describe('The id of the inserted row.'),
  row_count: z.int().describe('How many rows were inserted (1).'),
  message: z.string().describe('What was recorded, in words.'),
});

/**
 * An insert tool for one table, built on first use: until a caller needs it (a call, a listing),
 * only its id and toolset are known, so loading the gateway validates no configuration and builds
 * no schema. A broken configuration does not throw: the tool answers every call with CONFIG_ERROR
 * naming the mistake, and the contract tests fail on it.
 */
export function tableTool(config: TableConfig): AnyTool {
  let tool: AnyTool | undefined;
  const built = () => (tool ??= buildTableTool(config));
  return {
    id: TOOL_ID_PATTERN.test(String(config.toolId)) ? config.toolId : INVALID_TOOL_ID,
    toolset: 'table-tools',
    get title() {
      return built().title;
    },
    get annotations() {
      return built().annotations;
    },
    get description() {
      return built().description;
    },
    get purpose() {
      return built().purpose;
    },
    get acceptsIdempotencyKey() {
      return built().acceptsIdempotencyKey;
    },
    get input() {
      return built().input;
    },
    get output() {
      return built().output;
    },
    get example() {
      return built().example;
    },
    get hint() {
      return built().hint;
    },
    get unavailable() {
      return built().unavailable;
    },
    execute: (input, context) => built().execute(input, context),
    jsonSchemas: () => built().jsonSchemas(),
  };
}

/** The id of a table tool whose configured id is not one. */
const INVALID_TOOL_ID = 'invalid-table-tool';

/** Validates the configuration and defines its tool, or the tool that answers with its problems. */
function buildTableTool(config: TableConfig): AnyTool {
  const parsed = tableConfigSchema.safeParse(config);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'config'}: ${issue.message}`);
    return unavailableTool(config, problems);
  }
  const valid = parsed.data;
  const input = buildInputSchema(valid);
  const example = buildExample(valid);
  const problems = [
    ...valid.fields
      .filter((field) => field.default !== undefined && !input.shape[field.name]!.safeParse(field.default).success)
      .map((field) => `fields.${field.name}.default: ${JSON.stringify(field.default)} is not a valid value for the field`),
    ...(input.safeParse(example).success ? [] : ['the example built from the fields (their `example` values) is not a valid input']),
  ];
  if (problems.length) return unavailableTool(config, problems);

  return defineTool({
    id: valid.toolId,
    toolset: 'table-tools',
    title: valid.displayName,
    // Each call inserts a new row: repeating it (without an idempotency key) records a second one.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    description: valid.description,
    input,
    output: insertResult,
    example,
    async execute(values, { db, project, idFor, links }) {
      const columns = await liveColumns(db, valid.tableName);
      const mismatch = checkColumns(valid, columns);
      if (mismatch) return mismatch;

      const id = await idFor('row');
      const row: [column: string, value: unknown][] = [[ROW_ID_COLUMN, id]];
      for (const field of valid.fields) {
        const value = values[field.name] ?? field.default;
        if (value === undefined || value === null) continue; // absent: the column's default applies
        row.push([columnOf(valid, field), field.dataType === 'json' ? JSON.stringify(value) : value]);
      }
      if (columns!.has(TENANT_COLUMN)) row.push([TENANT_COLUMN, project.id]);

      // Numbers are read back as stored: a column with fewer decimals rounds them, and the answer says so.
      const numbers = valid.fields.filter((field) => field.dataType === 'numeric' && typeof values[field.name] === 'number');
      let stored: Record<string, unknown> | undefined;
      try {
        // A row with this id exists only if an earlier attempt of this call wrote it: then nothing
        // is inserted, and the numbers are read from that row.
        const result = await db.execute(
          insertStatement(
            valid.tableName,
            row,
            numbers.map((field) => columnOf(valid, field)),
          ),
        );
        stored = result.rows[0];
      } catch (error) {
        const failure = databaseFailure(error);
        if (failure?.error.code === 'CONFLICT') return conflictInFields(valid, failure);
        throw error;
      }
      const warnings = numbers.flatMap((field, i) => {
        const [received, kept] = [values[field.name] as number, Number(stored?.[`n${i}`])];
        return Number.isFinite(kept) && kept !== received ? [roundedWarning(field, received, kept)] : [];
      });
      const said = successMessage(valid, { ...values, ...Object.fromEntries(warnings.map((w) => [w.field, w.stored])) });
      // The configured message is kept as written; a note after it starts a sentence of its own.
      const message = warnings.length
        ? `${/[.!?]$/.test(said) ? said : `${said}.`} ${warnings.map((warning) => warning.message).join(' ')}`
        : said;
      // A link only when the deployment says where its rows are shown (TABLE_URL_TEMPLATES).
      const link = links.row(valid.tableName, id, linkLabel(capitalized(valid.recordName), id));
      return ok({ id, row_count: 1, message }, message, { ...(link ? { links: [link] } : {}), ...(warnings.length ? { warnings } : {}) });
    },
  });
}

/**
 * Inserts `row` unless a row with its id exists, answering the `numeric` columns as stored (text,
 * as `n0`, `n1`, ...) from whichever row has the id: the one inserted, or the one already there.
 */
function insertStatement(table: string, row: [string, unknown][], numeric: string[]): SQL {
  const columns = sql.join(
    row.map(([column]) => sql.identifier(column)),
    sql`, `,
  );
  const values = sql.join(
    row.map(([, value]) => sql`${value}`),
    sql`, `,
  );
  const insert = sql`insert into ${sql.identifier(table)} (${columns}) values (${values}) on conflict (${sql.identifier(ROW_ID_COLUMN)}) do nothing`;
  if (numeric.length === 0) return insert;
  const read = sql.join(
    numeric.map((column, i) => sql`${sql.identifier(column)}::text as ${sql.identifier(`n${i}`)}`),
    sql`, `,
  );
  // The outer select sees the table as it was before the insert: the row already there, if any.
  return sql`with inserted as (${insert} returning ${read})
    select * from inserted
    union all select ${read} from ${sql.identifier(table)} where ${sql.identifier(ROW_ID_COLUMN)} = ${row[0]![1]}`;
}

/** A `rounded` warning: `field` was received as `received` and stored as `stored`. */
function roundedWarning(field: FieldConfig, received: number, stored: number): Warning & { field: string; stored: number } {
  const places = field.precision === undefined ? '' : ` (${plural(field.scale ?? 0, 'decimal place')} kept)`;
  return { code: 'rounded', field: field.name, received, stored, message: `${field.name} ${received} was stored as ${stored}${places}.` };
}

/** A table's columns: name -> Postgres data type (`uuid`, `text`, ...). */
type Columns = Map<string, string>;

const columnCache = new Map<string, { columns: Columns; expiresAt: number }>();

/** The live table's columns (cached per isolate), or undefined when the table does not exist. */
async function liveColumns(db: Database, table: string): Promise<Columns | undefined> {
  const cached = columnCache.get(table);
  if (cached && cached.expiresAt > Date.now()) return cached.columns;
  const result = await db.execute(
    sql`select column_name, data_type from information_schema.columns where table_schema = current_schema() and table_name = ${table}`,
  );
  if (result.rows.length === 0) return undefined; // not cached: creating the table fixes it at once
  const columns: Columns = new Map(
    (result.rows as { column_name: unknown; data_type: unknown }[]).map((row) => [String(row.column_name), String(row.data_type)]),
  );
  columnCache.set(table, { columns, expiresAt: Date.now() + COLUMN_CACHE_TTL_MS });
  return columns;
}

function checkColumns(config: ValidTableConfig, columns: Columns | undefined): Failure | undefined {
  const hint = 'This is a deployment problem, not a problem with your input: report it to the operator; retrying will not help.';
  if (!columns) {
    return fail(
      'CONFIG_ERROR',
      `Tool '${config.toolId}' is misconfigured: its table '${config.tableName}' does not exist in the database.`,
      {
        hint,
        details: { reason: 'table_not_found', table: config.tableName },
      },
    );
  }
  if (columns.get(ROW_ID_COLUMN) !== 'uuid') {
    return fail(
      'CONFIG_ERROR',
      `Tool '${config.toolId}' is misconfigured: table '${config.tableName}' needs a primary key column '${ROW_ID_COLUMN} uuid' (the row id derived from each call, so that a retried call recognises its row).`,
      {
        hint,
        details: { reason: 'id_column_missing', table: config.tableName },
      },
    );
  }
  const missing = config.fields.map((field) => columnOf(config, field)).filter((column) => !columns.has(column));
  if (missing.length === 0) return undefined;
  return fail(
    'CONFIG_ERROR',
    `Tool '${config.toolId}' is misconfigured: table '${config.tableName}' has no column ${missing.map((c) => `'${c}'`).join(', ')}.`,
    {
      hint,
      details: { reason: 'column_not_found', table: config.tableName, missing_columns: missing },
    },
  );
}

/** Restates a unique violation in the caller's field names (columns may be mapped). */
function conflictInFields(config: ValidTableConfig, failure: Failure): Failure {
  const fieldOfColumn = new Map(config.fields.map((field) => [columnOf(config, field), field.name]));
  const columns = (failure.error.details?.columns as string[] | undefined) ?? [];
  const fields = columns.filter((column) => column !== TENANT_COLUMN).map((column) => fieldOfColumn.get(column) ?? column);
  if (fields.length === 0) return failure;
  return fail(
    'CONFLICT',
    `A ${config.recordName} with the same ${fields.join(' and ')} already exists. Change ${fields.length > 1 ? 'one of these fields' : 'this field'} to record a new entry.`,
    {
      details: {
        ...failure.error.details,
        fields: fields.map((field) => ({ field, code: 'conflict', message: `Field '${field}' duplicates an existing record.` })),
      },
      cause: failure.cause,
    },
  );
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function successMessage(config: ValidTableConfig, values: Record<string, unknown>): string {
  if (!config.successMessage) return `Recorded a new ${config.recordName}.`;
  return config.successMessage.replace(/\{(\w+)\}/g, (_, name: string) => String(values[name] ?? ''));
}

/** A tool that answers every call with the configuration's problems. */
function unavailableTool(config: TableConfig, problems: string[]): AnyTool {
  const id = TOOL_ID_PATTERN.test(String(config.toolId)) ? config.toolId : INVALID_TOOL_ID;
  const message = `Tool '${id}' cannot run because its table configuration is invalid: ${problems.join('; ')}.`;
  log('error', 'invalid_table_config', { tool: id, problems });
  return defineTool({
    id,
    toolset: 'table-tools',
    title: `Unavailable: ${String(config.displayName ?? id).slice(0, 100)}`,
    annotations: READ_ONLY,
    description: `Unavailable: ${message}`,
    input: z.strictObject({}),
    output: insertResult,
    example: {},
    unavailable: fail('CONFIG_ERROR', message, {
      hint: 'This is a deployment problem, not a problem with your input: report it to the operator.',
      details: { reason: 'invalid_table_config', problems },
    }),
    async execute() {
      return fail('CONFIG_ERROR', message);
    },
  });
}
