/**
 * The cumulative counters (./counters.ts) in the Prometheus text exposition format (version
 * 0.0.4), for scraping: `GET /metrics?format=prometheus`, with a project's key (its series) or the
 * deployment's `METRICS_TOKEN` (every project's). Counters and histograms only grow, so `rate()`,
 * `increase()` and `histogram_quantile()` read them as Prometheus means them to be read.
 *
 * Every series that a call could create is present from the start, at 0, for every project and
 * registered tool: a series appearing only with its first call would hide that call from
 * `increase()`.
 */
import { ERROR_STATUS } from '../core/contract.ts';
import { DURATION_BUCKETS, QUEUE_WAIT_BUCKETS, type CounterName, type CounterTotals } from './counters.ts';

/** The variable that lets an operator scrape every project at once. */
export interface MetricsEnv {
  /**
   * A secret bearer token for `GET /metrics?format=prometheus` answering every project's series
   * (labelled `project`) in one scrape. Unset: each project is scraped with its own key.
   */
  METRICS_TOKEN?: string;
}

/** The Content-Type of the text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const ERROR_CODES = Object.keys(ERROR_STATUS);

type Labels = Record<string, string>;

/**
 * Renders the counters: one family per figure, labelled by project and tool. `tools` are the
 * registered tools (every one gets its series at 0); tools found only in the counters (since
 * removed) are shown too.
 */
export function prometheusText(totals: CounterTotals, tools: readonly string[]): string {
  const index = new Map<string, number>();
  const key = (projectId: string, tool: string, name: CounterName, outcome = '', code = '', le = 0) =>
    `${projectId}\n${tool}\n${name}\n${outcome}\n${code}\n${le}`;
  const toolsOf = new Map<string, Set<string>>(totals.projects.map((project) => [project, new Set(tools)]));
  for (const row of totals.rows) {
    index.set(key(row.projectId, row.tool, row.name, row.outcome, row.code, row.le), row.value);
    let known = toolsOf.get(row.projectId);
    if (!known) toolsOf.set(row.projectId, (known = new Set(tools)));
    known.add(row.tool);
  }
  const value = (...args: Parameters<typeof key>) => index.get(key(...args)) ?? 0;
  const series = [...toolsOf].flatMap(([project, names]) =>
    [...names].sort().map((tool) => ({ project, tool, labels: { project, tool } })),
  );

  const lines: string[] = [];
  const family = (name: string, type: 'counter' | 'histogram', help: string) =>
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  const sample = (name: string, labels: Labels, sampleValue: number) =>
    lines.push(`${name}${labelSet(labels)} ${formatValue(sampleValue)}`);

  family(
    'edge_tools_tool_calls_total',
    'counter',
    'Calls by tool and outcome: success, failure (executed and failed) or refused (answered before executing: invalid input, rate limit, no slot), with the error code.',
  );
  for (const { project, tool, labels } of series) {
    sample('edge_tools_tool_calls_total', { ...labels, outcome: 'success' }, value(project, tool, 'calls', 'success'));
    for (const outcome of ['failure', 'refused'] as const) {
      for (const code of ERROR_CODES)
        sample('edge_tools_tool_calls_total', { ...labels, outcome, code }, value(project, tool, 'calls', outcome, code));
    }
  }
  const histogram = (name: string, help: string, bounds: readonly number[], bucket: CounterName, sum: CounterName) => {
    family(name, 'histogram', help);
    for (const { project, tool, labels } of series) {
      let count = 0;
      for (const bound of [...bounds, Infinity]) {
        count += value(project, tool, bucket, '', '', bound);
        sample(`${name}_bucket`, { ...labels, le: formatValue(bound) }, count);
      }
      sample(`${name}_sum`, labels, value(project, tool, sum));
      sample(`${name}_count`, labels, count);
    }
  };
  histogram(
    'edge_tools_tool_duration_seconds',
    'Execution duration, queue wait included (executed calls only).',
    DURATION_BUCKETS,
    'duration_bucket',
    'duration_sum',
  );
  histogram(
    'edge_tools_tool_queue_wait_seconds',
    'Wait for an execution slot (executed calls only).',
    QUEUE_WAIT_BUCKETS,
    'queue_wait_bucket',
    'queue_wait_sum',
  );
  const counter = (name: string, help: string, counterName: CounterName) => {
    family(name, 'counter', help);
    for (const { project, tool, labels } of series) sample(name, labels, value(project, tool, counterName));
  };
  counter('edge_tools_tool_retries_total', 'Attempts tried again after a transient failure.', 'retries');
  counter(
    'edge_tools_tool_slow_calls_total',
    'Executions slower than the slow-call threshold (answered with meta.performance_warning).',
    'slow_calls',
  );
  counter(
    'edge_tools_tool_lease_warnings_total',
    "Executions whose execution slot's lease could not be renewed while the tool ran.",
    'lease_warnings',
  );
  return lines.join('\n') + '\n';
}

function labelSet(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  return `{${entries.map(([name, value]) => `${name}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`).join(',')}}`;
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf';
  return String(value);
}
