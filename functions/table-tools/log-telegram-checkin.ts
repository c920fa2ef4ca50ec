import { tableTool } from './lib/table-tool.ts';

/** Records a Telegram user's check-in; shows column mappings (the input says user_id, the table telegram_user_id). */
export default tableTool({
  toolId: 'log-telegram-checkin',
  displayName: 'Log Telegram check-in',
  recordName: 'Telegram check-in',
  description: "Record a Telegram user's check-in; a mood report is log-mood.",
  tableName: 'telegram_checkins',
  fields: [
    { name: 'user_id', label: 'Telegram user id', dataType: 'text', required: true, maxLength: 64, example: '123456789' },
    { name: 'status', label: 'Status', dataType: 'enum', required: true, enumValues: ['ok', 'needs_help', 'away'], example: 'ok' },
    { name: 'message', label: 'Message', dataType: 'text', maxLength: 1000 },
    { name: 'checked_in_at', label: 'Checked in at', dataType: 'datetime', required: true, example: '2025-10-05T08:00:00Z' },
  ],
  columnMappings: { user_id: 'telegram_user_id' },
  successMessage: 'Checked in Telegram user {user_id} ({status}) at {checked_in_at}',
});
