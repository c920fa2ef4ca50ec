/**
 * TableConfig: the declaration an insert tool is generated from. It is itself validated with zod
 * when the tool is first needed, so a broken configuration is reported by name instead of misbehaving.
 */
import * as z from 'zod';
import { DATE_PATTERN, DATE_TIME_RANGE } from '../../../shared/core/fields.ts';
import { TOOL_ID_PATTERN } from '../../../shared/core/tool.ts';

export const DATA_TYPES = ['text', 'integer', 'numeric', 'boolean', 'enum', 'datetime', 'json'] as const;
export type DataType = (typeof DATA_TYPES)[number];

/** Text fields without a `maxLength` accept at most this many characters (code points). */
export const DEFAULT_TEXT_MAX_LENGTH = 10_000;

/** The column every tenant-owned table carries; filled from the API key, never from input. */
export const TENANT_COLUMN = 'project_id';

/**
 * The `id uuid` column every target table carries; filled with an id derived from the call, so a
 * retried call recognises the row it already wrote. Never from input.
 */
export const ROW_ID_COLUMN = 'id';

const identifier = z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier (letters, digits, _)');
const calendarDate = z
  .string()
  .regex(DATE_PATTERN, 'must be a calendar date, YYYY-MM-DD')
  .refine(
    (day) => day >= DATE_TIME_RANGE.from && day <= DATE_TIME_RANGE.to,
    `must be a date from ${DATE_TIME_RANGE.from} to ${DATE_TIME_RANGE.to}, the dates a date-time may have`,
  );

const fieldConfig = z
  .strictObject({
    /** The input field name (snake_case); also the column name unless mapped. */
    name: identifier,
    label: z.string().min(1).max(100),
    dataType: z.enum(DATA_TYPES),
    required: z.boolean().default(false),
    /** Inclusive bounds for integer and numeric fields. */
    min: z.number().optional(),
    max: z.number().optional(),
    /** Length bounds for text fields, in characters (code points). */
    minLength: z.int().min(0).optional(),
    maxLength: z.int().min(1).max(1_000_000).optional(),
    /**
     * Total and fractional digits for numeric fields, as in Postgres numeric(precision, scale): values
     * are rounded to `scale` decimals when stored, and must have at most precision - scale digits
     * before the decimal point once rounded.
     */
    precision: z.int().min(1).max(1000).optional(),
    scale: z.int().min(0).max(1000).optional(),
    enumValues: z.array(z.string().min(1).max(200)).min(1).max(500).optional(),
    /** Inclusive bounds for datetime fields: calendar dates (YYYY-MM-DD), compared with the value's date as written. */
    minDate: calendarDate.optional(),
    maxDate: calendarDate.optional(),
    /** Used when the caller omits the field (or sends null). */
    default: z.json().optional(),
    /** Shown to the model in the JSON Schema. */
    description: z.string().max(1000).optional(),
    /** A valid value, used in the example call shown with validation errors. */
    example: z.json().optional(),
  })
  .superRefine((field, ctx) => {
    const problem = (message: string) => ctx.addIssue({ code: 'custom', message: `field '${field.name}': ${message}` });
    const only = (key: keyof typeof field, types: DataType[]) => {
      if (field[key] !== undefined && !types.includes(field.dataType)) {
        problem(`'${key}' applies only to ${types.join('/')} fields, not to ${field.dataType}`);
      }
    };
    only('min', ['integer', 'numeric']);
    only('max', ['integer', 'numeric']);
    only('minLength', ['text']);
    only('maxLength', ['text']);
    only('precision', ['numeric']);
    only('scale', ['numeric']);
    only('enumValues', ['enum']);
    only('minDate', ['datetime']);
    only('maxDate', ['datetime']);
    if (field.dataType === 'enum' && !field.enumValues) problem("enum fields need 'enumValues'");
    if (field.enumValues && new Set(field.enumValues).size !== field.enumValues.length) problem("'enumValues' has duplicates");
    if (field.min !== undefined && field.max !== undefined && field.min > field.max)
      problem(`'min' (${field.min}) is greater than 'max' (${field.max})`);
    if (field.minLength !== undefined && field.maxLength !== undefined && field.minLength > field.maxLength) {
      problem(`'minLength' (${field.minLength}) is greater than 'maxLength' (${field.maxLength})`);
    }
    if (field.scale !== undefined && field.precision === undefined) problem("'scale' needs 'precision'");
    if (field.scale !== undefined && field.precision !== undefined && field.scale > field.precision) {
      problem(`'scale' (${field.scale}) is greater than 'precision' (${field.precision})`);
    }
    if (field.minDate && field.maxDate && field.minDate > field.maxDate) problem("'minDate' is after 'maxDate'");
    if (field.dataType === 'integer') {
      for (const key of ['min', 'max'] as const) {
        if (field[key] !== undefined && !Number.isInteger(field[key])) problem(`'${key}' must be an integer for integer fields`);
      }
    }
    if (field.required && field.default !== undefined) problem('a required field cannot have a default (a default makes it optional)');
    if (field.name === TENANT_COLUMN) problem(`'${TENANT_COLUMN}' is filled from the API key and cannot be an input field`);
  });

export const tableConfigSchema = z
  .strictObject({
    toolId: z.string().regex(TOOL_ID_PATTERN, "must be kebab-case, e.g. 'log-mood'"),
    /** The tool's human title, e.g. "Log mood" (MCP `title`, the catalog). */
    displayName: z.string().min(1).max(100),
    /** What one row is called in messages, e.g. "mood entry". */
    recordName: z.string().min(1).max(100),
    description: z.string().min(1).max(2000),
    tableName: identifier,
    fields: z.array(fieldConfig).min(1).max(100),
    /** Input field name -> column name, for fields whose column is named differently. */
    columnMappings: z.record(z.string(), identifier).default({}),
    /** The success message, with {field} placeholders, e.g. "Logged mood entry for {user_id}". */
    successMessage: z.string().max(500).optional(),
  })
  .superRefine((config, ctx) => {
    const problem = (message: string) => ctx.addIssue({ code: 'custom', message });
    const names = config.fields.map((f) => f.name);
    const duplicates = names.filter((name, i) => names.indexOf(name) !== i);
    if (duplicates.length) problem(`duplicate field names: ${[...new Set(duplicates)].join(', ')}`);
    for (const [field, column] of Object.entries(config.columnMappings)) {
      if (!names.includes(field)) problem(`columnMappings names '${field}', which is not a field (fields: ${names.join(', ')})`);
      if (column === TENANT_COLUMN) problem(`columnMappings maps '${field}' to '${TENANT_COLUMN}', which is filled from the API key`);
    }
    const columns = config.fields.map((f) => config.columnMappings[f.name] ?? f.name);
    const sharedColumns = columns.filter((column, i) => columns.indexOf(column) !== i);
    if (sharedColumns.length) problem(`several fields write the same column: ${[...new Set(sharedColumns)].join(', ')}`);
    if (columns.includes(ROW_ID_COLUMN))
      problem(`a field writes the column '${ROW_ID_COLUMN}', which is derived from the call (so a retried call recognises its row)`);
    for (const placeholder of config.successMessage?.matchAll(/\{(\w+)\}/g) ?? []) {
      if (!names.includes(placeholder[1]!)) problem(`successMessage uses {${placeholder[1]}}, which is not a field`);
    }
  });

/** A table tool's configuration, as written by its author. */
export type TableConfig = z.input<typeof tableConfigSchema>;
/** A configuration after validation, with defaults applied. */
export type ValidTableConfig = z.output<typeof tableConfigSchema>;
export type FieldConfig = ValidTableConfig['fields'][number];

/** The column a field is written to. */
export function columnOf(config: ValidTableConfig, field: FieldConfig): string {
  return config.columnMappings[field.name] ?? field.name;
}
