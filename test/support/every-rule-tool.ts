/**
 * A table tool with every data type and every option a table configuration offers: what the unit
 * tests of the exports and of the advertised schemas try beside the real tools, so that a rule no
 * real tool uses yet is covered too.
 */
import { tableTool } from '../../functions/table-tools/lib/table-tool.ts';

export const everyRule = tableTool({
  toolId: 'every-rule',
  displayName: 'Every rule',
  recordName: 'row',
  description: 'Exercises every input rule of table tools.',
  tableName: 'every_rule',
  fields: [
    { name: 'required_text', label: 'Required text', dataType: 'text', required: true, maxLength: 12, example: 'hello' },
    { name: 'long_text', label: 'Long text', dataType: 'text', minLength: 3 },
    { name: 'empty_allowed', label: 'Empty allowed', dataType: 'text', required: true, minLength: 0, maxLength: 4, example: '' },
    { name: 'count', label: 'Count', dataType: 'integer', required: true, example: 3 },
    { name: 'bounded', label: 'Bounded', dataType: 'integer', min: -5, max: 5, default: 0 },
    { name: 'price', label: 'Price', dataType: 'numeric', precision: 4, scale: 2 },
    { name: 'ratio', label: 'Ratio', dataType: 'numeric', min: 0, max: 1 },
    { name: 'flag', label: 'Flag', dataType: 'boolean' },
    { name: 'kind', label: 'Kind', dataType: 'enum', enumValues: ['a', 'b c', 'Ü'], default: 'a' },
    {
      name: 'at',
      label: 'At',
      dataType: 'datetime',
      required: true,
      minDate: '1999-12-31',
      maxDate: '2100-02-28',
      example: '2025-10-05T14:30:00Z',
    },
    { name: 'whenever', label: 'Whenever', dataType: 'datetime' },
    { name: 'payload', label: 'Payload', dataType: 'json' },
  ],
});
