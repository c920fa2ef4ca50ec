/**
 * The rules that turn a TableConfig into a strict zod input schema: one type per data type, the
 * configured constraints, optional when not required, defaults, and descriptions for the model.
 */
import { z } from 'zod';
import { DEFAULT_TEXT_MAX_LENGTH, type FieldConfig, type ValidTableConfig } from './table-config.ts';

/** Postgres `integer` range: larger values would fail in the database instead of here. */
const INT4_MIN = -2_147_483_648;
const INT4_MAX = 2_147_483_647;

/** Builds the strict input schema of a table tool. Call once per configuration, at module scope. */
export function buildInputSchema(config: ValidTableConfig) {
  const shape: Record<string, z.ZodType> = {};
  for (const field of config.fields) {
    const base = valueSchema(field);
    const schema = field.required
      ? base
      : field.default !== undefined
        ? base.nullish().default(field.default as never)
        : base.nullish();
    shape[field.name] = schema.describe(describeField(field));
  }
  return z.strictObject(shape);
}

/** The schema of one field's value, before optionality. */
function valueSchema(field: FieldConfig): z.ZodType {
  switch (field.dataType) {
    case 'text':
      return z
        .string()
        // A required text field must say something; an explicit minLength of 0 allows "".
        .min(field.minLength ?? (field.required ? 1 : 0))
        .max(field.maxLength ?? DEFAULT_TEXT_MAX_LENGTH);
    case 'integer':
      return z.int().min(field.min ?? INT4_MIN).max(field.max ?? INT4_MAX);
    case 'numeric':
      return numericSchema(field);
    case 'boolean':
      return z.boolean();
    case 'enum':
      return z.enum(field.enumValues as [string, ...string[]]);
    case 'datetime':
      return datetimeSchema(field);
    case 'json':
      return z.json();
  }
}

function numericSchema(field: FieldConfig): z.ZodType {
  let schema = z.number();
  if (field.min !== undefined) schema = schema.min(field.min);
  if (field.max !== undefined) schema = schema.max(field.max);
  const { precision, scale = 0 } = field;
  if (precision === undefined) return schema;
  const integerDigits = precision - scale;
  return schema
    .refine((value) => Number(value.toFixed(scale)) === value, {
      message: `must have at most ${scale} decimal place${scale === 1 ? '' : 's'}`,
    })
    .refine((value) => Math.abs(value) < 10 ** integerDigits, {
      message: `must have at most ${integerDigits} digit${integerDigits === 1 ? '' : 's'} before the decimal point`,
    });
}

function datetimeSchema(field: FieldConfig): z.ZodType {
  let schema: z.ZodType<string> = z.iso.datetime({ offset: true });
  const { minDate, maxDate } = field;
  if (minDate) schema = schema.refine((value) => Date.parse(value) >= Date.parse(minDate), { message: `must not be before ${minDate}` });
  if (maxDate) schema = schema.refine((value) => Date.parse(value) <= Date.parse(maxDate), { message: `must not be after ${maxDate}` });
  return schema;
}

function describeField(field: FieldConfig): string {
  const parts = [field.description ?? field.label];
  if (field.dataType === 'datetime') parts.push('ISO 8601 date-time with a time zone, e.g. 2025-10-05T14:30:00Z.');
  if (field.dataType === 'numeric' && field.scale !== undefined) parts.push(`At most ${field.scale} decimal places.`);
  if (!field.required) parts.push(field.default !== undefined ? `Optional; defaults to ${JSON.stringify(field.default)}.` : 'Optional; null means absent.');
  return parts.join(' ');
}

/** A valid input for the configuration: each field's `example`, or a value built from its constraints. */
export function buildExample(config: ValidTableConfig): Record<string, unknown> {
  const example: Record<string, unknown> = {};
  for (const field of config.fields) {
    if (field.example !== undefined) example[field.name] = field.example;
    else if (field.required) example[field.name] = exampleValue(field);
  }
  return example;
}

function exampleValue(field: FieldConfig): unknown {
  switch (field.dataType) {
    case 'text':
      return 'x'.repeat(Math.max(field.minLength ?? 1, 1)).slice(0, field.maxLength ?? DEFAULT_TEXT_MAX_LENGTH);
    case 'integer':
      return field.min ?? field.max ?? 1;
    case 'numeric':
      return field.min ?? field.max ?? 1;
    case 'boolean':
      return true;
    case 'enum':
      return field.enumValues![0];
    case 'datetime':
      return field.minDate ?? field.maxDate ?? '2025-10-05T14:30:00Z';
    case 'json':
      return {};
  }
}
