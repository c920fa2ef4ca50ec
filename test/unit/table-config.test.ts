import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { buildExample, buildInputSchema } from '../../functions/table-tools/lib/input-schema.ts';
import { tableConfigSchema, type TableConfig } from '../../functions/table-tools/lib/table-config.ts';
import { tableTool } from '../../functions/table-tools/lib/table-tool.ts';

const base: TableConfig = {
  toolId: 'log-thing',
  displayName: 'thing',
  recordName: 'record',
  description: 'Logs a thing.',
  tableName: 'things',
  fields: [{ name: 'title', label: 'Title', dataType: 'text', required: true }],
};

function problemsOf(config: TableConfig): string[] {
  const tool = tableTool(config);
  return (tool.unavailable?.error.details?.problems as string[] | undefined) ?? [];
}

describe('TableConfig validation', () => {
  it('accepts a valid configuration', () => {
    expect(tableTool(base).unavailable).toBeUndefined();
  });

  it.each<[string, Partial<TableConfig>, string]>([
    ['a bad tool id', { toolId: 'Log Thing' }, 'toolId: must be kebab-case'],
    ['a table name that is not an identifier', { tableName: 'things; drop table x' }, 'tableName: must be a lower-case SQL identifier'],
    ['duplicate field names', { fields: [base.fields[0]!, base.fields[0]!] }, 'duplicate field names: title'],
    [
      'min above max',
      { fields: [{ name: 'n', label: 'N', dataType: 'integer', min: 5, max: 1 }] },
      "field 'n': 'min' (5) is greater than 'max' (1)",
    ],
    ['an enum without values', { fields: [{ name: 'e', label: 'E', dataType: 'enum' }] }, "field 'e': enum fields need 'enumValues'"],
    [
      'maxLength on a number',
      { fields: [{ name: 'n', label: 'N', dataType: 'numeric', maxLength: 3 }] },
      "'maxLength' applies only to text fields, not to numeric",
    ],
    [
      'scale above precision',
      { fields: [{ name: 'n', label: 'N', dataType: 'numeric', precision: 2, scale: 3 }] },
      "'scale' (3) is greater than 'precision' (2)",
    ],
    ['an unknown data type', { fields: [{ name: 'n', label: 'N', dataType: 'money' as 'text' }] }, 'fields.0.dataType'],
    ['a project_id field', { fields: [{ name: 'project_id', label: 'P', dataType: 'text' }] }, "'project_id' is filled from the API key"],
    [
      'a field writing the id column',
      { fields: [{ name: 'id', label: 'Id', dataType: 'text' }] },
      "a field writes the column 'id', which is derived from the call",
    ],
    ['a mapping to the id column', { columnMappings: { title: 'id' } }, "a field writes the column 'id'"],
    ['a mapping of an unknown field', { columnMappings: { nope: 'col' } }, "columnMappings names 'nope', which is not a field"],
    [
      'a default that breaks the field',
      { fields: [{ name: 'n', label: 'N', dataType: 'integer', max: 3, default: 9 }] },
      'fields.n.default: 9 is not a valid value',
    ],
    ['an unknown placeholder', { successMessage: 'Saved {nothing}' }, 'successMessage uses {nothing}'],
    ['an unknown option', { colour: 'red' } as Partial<TableConfig>, 'Unrecognized key'],
    [
      'a date bound that is a date-time',
      { fields: [{ name: 'd', label: 'D', dataType: 'datetime', minDate: '1900-01-01T00:00:00Z' }] },
      'must be a calendar date, YYYY-MM-DD',
    ],
    [
      'minDate after maxDate',
      { fields: [{ name: 'd', label: 'D', dataType: 'datetime', minDate: '2025-01-02', maxDate: '2025-01-01' }] },
      "'minDate' is after 'maxDate'",
    ],
  ])('names the mistake: %s', (_case, change, problem) => {
    const problems = problemsOf({ ...base, ...change });
    expect(problems.join('\n')).toContain(problem);
  });

  it('keeps a broken tool answering CONFIG_ERROR instead of throwing at start', () => {
    const tool = tableTool({ ...base, fields: [] });
    expect(tool.unavailable?.error).toMatchObject({ code: 'CONFIG_ERROR', details: { reason: 'invalid_table_config' } });
  });
});

describe('input schema generation', () => {
  const config = tableConfigSchema.parse({
    ...base,
    fields: [
      { name: 'title', label: 'Title', dataType: 'text', required: true, maxLength: 20, description: 'What it is.' },
      { name: 'count', label: 'Count', dataType: 'integer', min: 0, max: 9 },
      { name: 'price', label: 'Price', dataType: 'numeric', precision: 6, scale: 2 },
      { name: 'done', label: 'Done', dataType: 'boolean', default: false },
      { name: 'kind', label: 'Kind', dataType: 'enum', required: true, enumValues: ['a', 'b'] },
      { name: 'at', label: 'At', dataType: 'datetime', required: true, maxDate: '2030-01-01' },
      { name: 'meta', label: 'Meta', dataType: 'json' },
    ],
  });
  const schema = buildInputSchema(config);

  it('makes required fields required and the rest optional, with defaults', () => {
    const json = z.toJSONSchema(schema, { io: 'input' }) as {
      required: string[];
      properties: Record<string, Record<string, unknown>>;
      additionalProperties: boolean;
    };
    expect(json.required.sort()).toEqual(['at', 'kind', 'title']);
    expect(json.additionalProperties).toBe(false);
    expect(json.properties.title).toMatchObject({ type: 'string', minLength: 1, maxLength: 20, description: 'What it is.' });
    // A label that only spells out the name ("Count" for count) is no description.
    expect(json.properties.count).not.toHaveProperty('description');
    expect(json.properties.done).toMatchObject({ default: false });
  });

  it('applies the rules of each data type', () => {
    const valid = { title: 't', kind: 'a', at: '2029-12-31T18:00:00-05:00' };
    expect(schema.safeParse(valid).success).toBe(true);
    expect(schema.parse(valid).done).toBe(false);
    expect(schema.safeParse({ ...valid, price: 1234.56 }).success).toBe(true);
    expect(schema.safeParse({ ...valid, price: 12345.6 }).success).toBe(false);
    // Decimals beyond the scale are rounded by Postgres, but never past precision - scale integer digits.
    expect(schema.safeParse({ ...valid, price: 0.1 + 0.2 }).success).toBe(true);
    expect(schema.safeParse({ ...valid, price: 9999.994 }).success).toBe(true);
    expect(schema.safeParse({ ...valid, price: 9999.995 }).success).toBe(false);
    expect(schema.safeParse({ ...valid, price: -9999.995 }).success).toBe(false);
    // Date bounds compare the date as written: the whole of 2030-01-01 is in, 2030-01-02 is out.
    expect(schema.safeParse({ ...valid, at: '2030-01-01T23:59:59-15:00' }).success).toBe(true);
    expect(schema.safeParse({ ...valid, at: '2030-01-02T00:00:00+15:00' }).success).toBe(false);
    expect(schema.safeParse({ ...valid, title: ' \n ' }).success).toBe(false);
    expect(schema.safeParse({ ...valid, meta: { a: [1, { b: null }] } }).success).toBe(true);
    for (const notAnObject of [[1, 2], 'text', 3, true]) expect(schema.safeParse({ ...valid, meta: notAnObject }).success).toBe(false);
    expect(schema.safeParse({ ...valid, count: null }).success).toBe(true);
    expect(schema.safeParse({ ...valid, kind: null }).success).toBe(false);
  });

  it('builds an example that the schema accepts', () => {
    expect(schema.safeParse(buildExample(config)).success).toBe(true);
  });
});
