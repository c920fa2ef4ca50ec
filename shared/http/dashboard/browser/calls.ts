/**
 * The dashboard's calls: the window's executions (successes and failures) and refused calls,
 * newest first, filtered by tool, outcome and code; each opens in a dialog, executions with their
 * whole trace (input, output or error, duration, queue wait, attempts, warnings), refusals with
 * each field's problem.
 */
import { ERROR_STATUS } from '../../../core/contract.ts';
import { api, query, type Execution, type ExecutionDetail, type ExecutionsPage, type Refusal, type RefusalsPage } from './api.ts';
import { byId, element, facts, json, ms, reconcile, when } from './dom.ts';

/** Calls listed at most (each route's page). */
const LISTED = 50;

/** One row of the list: an execution or a refused call. */
type Call = ({ kind: 'execution' } & Execution) | ({ kind: 'refusal' } & Refusal);

/** The rows drawn, by trace id: kept across refreshes, so focus and position stay. */
const rows = new Map<string, Element>();

/** Fills the code filter with every error code (once). */
export function setUpFilters(onChange: () => void): void {
  const codes = byId<HTMLSelectElement>('filter-code');
  codes.append(...Object.keys(ERROR_STATUS).map((code) => element('option', code, { value: code })));
  for (const id of ['filter-tool', 'filter-outcome', 'filter-code']) byId(id).addEventListener('change', onChange);
  byId('close-call').addEventListener('click', () => byId<HTMLDialogElement>('call').close());
}

/** Offers the window's tools in the tool filter, keeping the one chosen. */
export function offerTools(tools: readonly string[]): void {
  const select = byId<HTMLSelectElement>('filter-tool');
  const chosen = select.value;
  const names = [...new Set([...tools, ...(chosen ? [chosen] : [])])].sort();
  select.replaceChildren(element('option', 'All tools', { value: '' }), ...names.map((name) => element('option', name, { value: name })));
  select.value = chosen;
}

/** Reads and draws the calls that started at or after `since`, as the filters ask. */
export async function refreshCalls(since: string): Promise<void> {
  const tool = byId<HTMLSelectElement>('filter-tool').value || undefined;
  const outcome = byId<HTMLSelectElement>('filter-outcome').value;
  const code = byId<HTMLSelectElement>('filter-code').value || undefined;
  const executions =
    outcome === 'refused'
      ? Promise.resolve({ executions: [] })
      : api<ExecutionsPage>(`/executions?${query({ since, tool, status: outcome || undefined, error_code: code, limit: LISTED })}`);
  const refusals =
    outcome === '' || outcome === 'refused'
      ? api<RefusalsPage>(`/refusals?${query({ since, tool, code, limit: LISTED })}`)
      : Promise.resolve({ refusals: [] });
  const calls: Call[] = [
    ...(await executions).executions.map((execution) => ({ kind: 'execution' as const, ...execution })),
    ...(await refusals).refusals.map((refusal) => ({ kind: 'refusal' as const, ...refusal })),
  ]
    .sort((a, b) => b.started_at.localeCompare(a.started_at))
    .slice(0, LISTED);
  reconcile(byId('calls'), calls, (call) => call.trace_id, rowOf, rows);
  byId('no-calls').hidden = calls.length > 0;
}

/** The list item of a call: one button that opens it. */
function rowOf(call: Call): HTMLLIElement {
  const outcome = call.kind === 'refusal' ? 'refused' : call.status;
  const code = call.kind === 'refusal' ? call.code : (call.error_code ?? '');
  const open = element('button', null, { type: 'button', class: 'call', 'data-trace-id': call.trace_id, 'data-outcome': outcome });
  open.append(
    element('time', new Date(call.started_at).toLocaleTimeString(), { datetime: call.started_at }),
    element('span', call.tool, { class: 'tool' }),
    element('span', outcome, { class: `outcome ${outcome}` }),
    element('span', code, { class: 'code' }),
    element('span', call.kind === 'execution' ? `${ms(call.duration_ms)} ms` : '', { class: 'duration' }),
  );
  open.addEventListener('click', () => void (call.kind === 'refusal' ? showRefusal(call) : showExecution(call.trace_id)));
  const row = element('li');
  row.append(open);
  return row;
}

/** The dialog's parts, shown or hidden by what the call has. */
function showDialog(
  title: string,
  entries: readonly (readonly [string, string | number])[],
  sections: Record<string, string | null>,
): void {
  byId('call-title').textContent = title;
  facts(byId('call-facts'), entries);
  for (const [name, text] of Object.entries(sections)) {
    const section = byId(`call-${name}`);
    section.hidden = text === null;
    section.querySelector('pre')!.textContent = text ?? '';
  }
  const dialog = byId<HTMLDialogElement>('call');
  if (!dialog.open) dialog.showModal();
}

/** Opens an execution's whole trace. */
async function showExecution(traceId: string): Promise<void> {
  byId('fields-section').hidden = true;
  const execution = await api<ExecutionDetail>(`/executions/${encodeURIComponent(traceId)}`).catch((error: Error) => error);
  if (execution instanceof Error) {
    showDialog(
      'Trace unavailable',
      [
        ['Trace id', traceId],
        ['Problem', execution.message],
      ],
      { input: null, output: null, error: null, stack: null, retries: null },
    );
    return;
  }
  const failed = execution.status === 'failure';
  const warnings = [
    ...(execution.performance_warning ? ['slower than the slow-call threshold'] : []),
    ...execution.warnings.map((warning) => `${warning.code}: ${warning.message}`),
  ];
  const actor = execution.actor.api_key_name
    ? `${execution.actor.api_key_name} (${execution.actor.api_key_id})`
    : (execution.actor.api_key_id ?? '—');
  showDialog(
    `${failed ? 'Failure' : 'Success'} of ${execution.tool}`,
    [
      ['Trace id', execution.trace_id],
      ['Tool', execution.tool],
      ['Outcome', execution.status],
      ['Error code', execution.error_code ?? '—'],
      ['Started', when(execution.started_at)],
      ['Duration ms', ms(execution.duration_ms)],
      ['Queue wait ms', ms(execution.queued_ms)],
      ['Attempts', execution.attempts],
      ['Warnings', warnings.join('; ') || 'none'],
      ['API key', actor],
      ['OpenTelemetry trace', execution.otel.trace_id ?? '—'],
    ],
    {
      input: json(execution.input),
      output: failed ? null : json(execution.output),
      error: failed ? json(withoutCause(execution.error)) : null,
      stack: failed ? stackOf(execution.error) : null,
      retries:
        execution.retry_errors.length === 0
          ? 'None'
          : execution.retry_errors
              .map((retry) => `attempt ${retry.attempt} after ${ms(retry.time_ms)} ms: ${retry.code} ${retry.message}`)
              .join('\n'),
    },
  );
}

/** Opens a refused call: its message and each field's problem. */
function showRefusal(refusal: Refusal): void {
  const problems = byId('fields');
  problems.replaceChildren(
    ...refusal.fields.map((field) => {
      const item = element('li');
      item.append(element('code', field.field), element('span', ` ${field.code}: `, { class: 'muted' }), element('span', field.message));
      return item;
    }),
  );
  byId('fields-section').hidden = refusal.fields.length === 0;
  showDialog(
    `Refused call of ${refusal.tool}`,
    [
      ['Trace id', refusal.trace_id],
      ['Tool', refusal.tool],
      ['Outcome', 'refused before executing'],
      ['Code', refusal.code],
      ['Arrived', when(refusal.started_at)],
      ['Message', refusal.message ?? '—'],
    ],
    { input: null, output: null, error: null, stack: null, retries: null },
  );
}

function withoutCause(error: unknown): unknown {
  if (typeof error !== 'object' || error === null) return error;
  return Object.fromEntries(Object.entries(error).filter(([name]) => name !== 'cause'));
}

/** The stacks of an error's causes, outermost first. */
function stackOf(error: unknown): string {
  const stacks: string[] = [];
  let cause = (error as { cause?: unknown } | null)?.cause as { cause?: unknown; stack?: string; message?: string } | undefined;
  for (let depth = 0; cause && depth < 5; depth++) {
    stacks.push(cause.stack ?? cause.message ?? JSON.stringify(cause));
    cause = cause.cause as typeof cause;
  }
  return stacks.join('\n\ncaused by ') || '—';
}
