/**
 * Every tool, in catalog order. A tool's id is also its file name: functions/<toolset>/<id>.ts.
 */
import type { AnyTool } from '../shared/tool.ts';
import logMood from './table-tools/log-mood.ts';
import logTelegramCheckin from './table-tools/log-telegram-checkin.ts';
import submitHealthForm from './table-tools/submit-health-form.ts';

export const tools: readonly AnyTool[] = [logMood, submitHealthForm, logTelegramCheckin];
