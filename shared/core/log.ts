/**
 * Structured logs: one JSON object per line, so Workers Logs and `wrangler tail` can filter them.
 */
export type LogLevel = 'info' | 'warn' | 'error';

/** Writes one structured log line. */
export function log(level: LogLevel, event: string, fields: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ level, event, ...fields });
  if (level === 'error') console.error(line);
  else if (level === 'warn') console.warn(line);
  else console.log(line);
}

/**
 * An error as a log line may show it: its name, its code (a SQLSTATE, say) and its message, never
 * the data it was about. A failed query's error quotes its SQL and parameters (tool input); the log
 * gets the database's own message instead. The whole error, stack included, belongs in the trace
 * (describeCause in ./tracing.ts), which only its project reads.
 */
export function errorForLog(error: unknown): { name: string; message: string; code?: string } {
  if (!(error instanceof Error)) return { name: typeof error, message: String(error).slice(0, 200) };
  const inner = /^Failed query:/.test(error.message) && error.cause instanceof Error ? error.cause : error;
  const code = (inner as { code?: unknown }).code;
  return { name: error.name, message: inner.message.slice(0, 500), ...(typeof code === 'string' ? { code } : {}) };
}
