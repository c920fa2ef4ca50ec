/**
 * The rules that turn a TableConfig into a strict zod input schema: one type per data type, the
 * configured constraints, optional when not required, defaults, and descriptions for the model.
 * Fields come from the shared builders (shared/core/fields.ts), so the advertised JSON Schema
 * states every rule: lengths in code points, non-blank required text, RFC 3339 date-times within
 * their date bounds, bounded numbers.
 */
import * as z from 'zod';
import { dateTime, INT4, text } from '../../../shared/core/fields.ts';
import { JSON_VALUE_DEFAULTS, jsonObject, jsonObjectSentence } from '../../../shared/core/json-fields.ts';
import { plural } from '../../../shared/core/plural.ts';
import { DEFAULT_TEXT_MAX_LENGTH, type FieldConfig, type ValidTableConfig } from './table-config.ts';

/** Builds the strict input schema of a table tool. Call once per configuration, at module scope. */
export function buildInputSchema(config: ValidTableConfig) {
  const shape: Record<string, z.ZodType> = {};
  for (const field of config.fields) {
    const base = valueSchema(field);
    const schema = field.required ? base : field.default !== undefined ? base.nullish().default(field.default as never) : base.nullish();
    const description = describeField(field);
    shape[field.name] = description ? schema.describe(description) : schema;
  }
  return z.strictObject(shape);
}

/** The schema of one field's value, before optionality. */
function valueSchema(field: FieldConfig): z.ZodType {
  switch (field.dataType) {
    case 'text':
      // A required text field must say something (not only whitespace); an explicit minLength of 0 allows "".
      return text({
        max: field.maxLength ?? DEFAULT_TEXT_MAX_LENGTH,
        min: field.minLength ?? 0,
        blank: !field.required || field.minLength === 0,
      });
    case 'integer':
      return z
        .int()
        .min(field.min ?? INT4.min)
        .max(field.max ?? INT4.max);
    case 'numeric':
      return numericSchema(field);
    case 'boolean':
      return z.boolean();
    case 'enum':
      return z.enum(field.enumValues as [string, ...string[]]);
    case 'datetime':
      return dateTime({ minDate: field.minDate, maxDate: field.maxDate });
    case 'json':
      // A JSON object ("must be a valid JSON object"), any JSON inside it, or its JSON text.
      return jsonObject();
  }
}

/**
 * A number within `min`/`max`. With a precision, Postgres rounds the value to `scale` decimals
 * (half away from zero) and refuses it when the rounded value has more than precision - scale
 * integer digits: values are bounded so that they never round past that limit. Extra decimals are
 * not refused: JSON Schema cannot state "at most 2 decimals" of a binary float (`multipleOf: 0.01`
 * refuses 1.15 in standard validators), and Postgres rounds them as documented.
 */
function numericSchema(field: FieldConfig): z.ZodType {
  let schema = z.number();
  const { precision, scale = 0 } = field;
  // The least magnitude that rounds to 10^(precision - scale): e.g. 999.995 for numeric(5,2).
  const limit = precision === undefined ? undefined : 10 ** (precision - scale) - 0.5 * 10 ** -scale;
  if (limit !== undefined && (field.min === undefined || field.min <= -limit)) schema = schema.gt(-limit);
  if (field.min !== undefined) schema = schema.min(field.min);
  if (limit !== undefined && (field.max === undefined || field.max >= limit)) schema = schema.lt(limit);
  if (field.max !== undefined) schema = schema.max(field.max);
  return schema;
}

function describeField(field: FieldConfig): string {
  // A label that only spells out the field's name ("Blood type" for blood_type) tells a model nothing.
  const text = field.description ?? (field.label.toLowerCase() === field.name.replaceAll('_', ' ') ? undefined : field.label);
  const parts = text ? [/[.!?)]$/.test(text) ? text : `${text}.`] : [];
  if (field.dataType === 'datetime') {
    if (field.minDate) parts.push(`On or after ${field.minDate}.`);
    if (field.maxDate) parts.push(`On or before ${field.maxDate}.`);
  }
  // The depth is said in words only: JSON Schema could say it only with $ref, which model APIs refuse.
  if (field.dataType === 'json') parts.push(jsonObjectSentence(JSON_VALUE_DEFAULTS.maxDepth));
  if (field.dataType === 'numeric' && field.precision !== undefined) parts.push(`Rounded to ${plural(field.scale ?? 0, 'decimal place')}.`);
  if (!field.required && field.default !== undefined) parts.push(`Default ${JSON.stringify(field.default)}.`);
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
      return `${field.minDate ?? field.maxDate ?? '2025-10-05'}T14:30:00Z`;
    case 'json':
      return {};
  }
}
