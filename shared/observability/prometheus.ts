/**
 * The figures of `GET /metrics` in the Prometheus text exposition format (version 0.0.4), for
 * scraping: `GET /metrics?format=prometheus` with the project's key as a bearer token.
 *
 * Every value covers the query's window (default the last 24 hours), not the life of a process:
 * counts are gauges (they fall as calls leave the window), and the latency summaries' quantiles,
 * `_sum` and `_count` describe the executions in the window. Read them as they are; `rate()`
 * over them means nothing.
 */
import type { Metrics, ToolMetrics } from './metrics.ts';

/** The Content-Type of the text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

type Labels = Record<string, string>;
type Sample = { suffix?: string; labels: Labels; value: number };

/** Renders `metrics` as Prometheus text: one family per figure, labelled by tool. */
export function prometheusText(metrics: Metrics): string {
  const families: string[] = [];
  const family = (name: string, type: 'gauge' | 'summary', help: string, samples: Sample[]) => {
    const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];
    for (const sample of samples) lines.push(`${name}${sample.suffix ?? ''}${labelSet(sample.labels)} ${formatValue(sample.value)}`);
    families.push(lines.join('\n'));
  };
  const { tools } = metrics;
  const executed = tools.filter((tool) => tool.calls > 0);
  const perTool = (value: (tool: ToolMetrics) => number, from: readonly ToolMetrics[] = tools): Sample[] =>
    from.map((tool) => ({ labels: { tool: tool.tool }, value: value(tool) }));

  family('edge_tools_metrics_window_seconds', 'gauge', 'Length of the window every other figure covers.', [
    { labels: {}, value: (Date.parse(metrics.window.until) - Date.parse(metrics.window.since)) / 1000 },
  ]);
  family(
    'edge_tools_executions',
    'gauge',
    'Tool executions in the window, by tool and status.',
    tools.flatMap((tool) => [
      { labels: { tool: tool.tool, status: 'success' }, value: tool.successes },
      { labels: { tool: tool.tool, status: 'failure' }, value: tool.failures },
    ]),
  );
  family(
    'edge_tools_execution_failures',
    'gauge',
    'Failed executions in the window, by tool and error code.',
    tools.flatMap((tool) => Object.entries(tool.failures_by_code).map(([code, count]) => ({ labels: { tool: tool.tool, code }, value: count }))),
  );
  family('edge_tools_execution_success_ratio', 'gauge', 'Successful executions / executions in the window (tools with executions only).', perTool((tool) => tool.success_rate ?? 0, executed));
  family(
    'edge_tools_execution_duration_seconds',
    'summary',
    'Execution duration (queue wait included) in the window.',
    summary(executed, (tool) => tool.duration_ms, [
      ['0.5', 'p50'],
      ['0.95', 'p95'],
      ['0.99', 'p99'],
    ]),
  );
  family(
    'edge_tools_queue_wait_seconds',
    'summary',
    'Wait for an execution slot in the window.',
    summary(executed, (tool) => tool.queued_ms, [
      ['0.5', 'p50'],
      ['0.95', 'p95'],
    ]),
  );
  family('edge_tools_retried_executions', 'gauge', 'Executions in the window that needed more than one attempt.', perTool((tool) => tool.retried_calls));
  family('edge_tools_performance_warnings', 'gauge', 'Executions in the window over the slow-call threshold.', perTool((tool) => tool.performance_warnings));
  family(
    'edge_tools_refusals',
    'gauge',
    'Calls refused before executing in the window, by tool and reason (validation, rate_limit, busy).',
    tools.flatMap((tool) => [
      { labels: { tool: tool.tool, reason: 'validation' }, value: tool.validation_refusals },
      { labels: { tool: tool.tool, reason: 'rate_limit' }, value: tool.rate_limit_refusals },
      { labels: { tool: tool.tool, reason: 'busy' }, value: tool.busy_refusals },
    ]),
  );
  return families.join('\n') + '\n';
}

/** A summary's samples in seconds: one per quantile, then `_sum` and `_count`, for each tool. */
function summary(
  tools: readonly ToolMetrics[],
  figures: (tool: ToolMetrics) => { avg: number | null } & Record<string, number | null>,
  quantiles: readonly (readonly [string, string])[],
): Sample[] {
  return tools.flatMap((tool) => {
    const values = figures(tool);
    const samples: Sample[] = quantiles.map(([quantile, key]) => ({ labels: { tool: tool.tool, quantile }, value: (values[key] ?? 0) / 1000 }));
    samples.push({ suffix: '_sum', labels: { tool: tool.tool }, value: ((values.avg ?? 0) * tool.calls) / 1000 });
    samples.push({ suffix: '_count', labels: { tool: tool.tool }, value: tool.calls });
    return samples;
  });
}

function labelSet(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  return `{${entries.map(([name, value]) => `${name}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`).join(',')}}`;
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf';
  return String(Math.round(value * 1e6) / 1e6);
}
