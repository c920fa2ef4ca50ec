import { tableTool } from './lib/table-tool.ts';

/** Records how a user feels: mood, energy and optional notes, once per user and moment. */
export default tableTool({
  toolId: 'log-mood',
  displayName: 'Log mood',
  recordName: 'mood entry',
  description:
    'Log how a user feels (mood, energy level); not for physical symptoms (submit-health-form). One entry per user and timestamp.',
  tableName: 'mood_entries',
  fields: [
    {
      name: 'user_id',
      label: 'User id',
      dataType: 'text',
      required: true,
      maxLength: 100,
      example: 'user_123',
    },
    { name: 'mood', label: 'Mood', dataType: 'enum', required: true, enumValues: ['happy', 'sad', 'neutral', 'anxious'], example: 'happy' },
    {
      name: 'energy_level',
      label: 'Energy level',
      dataType: 'integer',
      required: true,
      min: 1,
      max: 10,
      description: '1 exhausted, 10 full of energy.',
      example: 7,
    },
    { name: 'notes', label: 'Notes', dataType: 'text', maxLength: 500 },
    {
      name: 'timestamp',
      label: 'Timestamp',
      dataType: 'datetime',
      required: true,
      description: 'When the user felt this way.',
      example: '2025-10-05T14:30:00Z',
    },
  ],
  successMessage: 'Logged mood entry for {user_id} at {timestamp}',
});
