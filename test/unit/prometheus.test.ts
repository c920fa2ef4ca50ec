/**
 * The Prometheus text exposition of GET /metrics, read back by an independent parser
 * (parse-prometheus-text-format, a port of the Prometheus Python client's parser): every line must
 * parse, label values must survive escaping, and the figures must be those of the JSON metrics.
 * (That parser folds labelled summaries into one entry, so their lines are checked as text.)
 */
import parsePrometheus from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import type { Metrics, ToolMetrics } from '../../shared/observability/metrics.ts';
import { prometheusText } from '../../shared/observability/prometheus.ts';

function tool(name: string, overrides: Partial<ToolMetrics> = {}): ToolMetrics {
  return {
    tool: name,
    calls: 4,
    successes: 3,
    failures: 1,
    success_rate: 0.75,
    failures_by_code: { NOT_FOUND: 1 },
    duration_ms: { avg: 25, p50: 20, p95: 48.5, p99: 49.7, max: 50 },
    queued_ms: { avg: 2, p50: 0, p95: 7.5 },
    retried_calls: 1,
    performance_warnings: 0,
    validation_refusals: 2,
    rate_limit_refusals: 1,
    busy_refusals: 0,
    ...overrides,
  };
}

const metrics: Metrics = {
  window: { since: '2026-01-01T00:00:00.000Z', until: '2026-01-02T00:00:00.000Z', bucket_seconds: 1_800 },
  totals: { ...tool('all') },
  tools: [
    tool('log-mood'),
    // A tool with refusals only, and a name that needs escaping in a label value.
    tool('odd"tool\\name', { calls: 0, successes: 0, failures: 0, success_rate: null, failures_by_code: {}, duration_ms: { avg: null, p50: null, p95: null, p99: null, max: null }, queued_ms: { avg: null, p50: null, p95: null }, retried_calls: 0 }),
  ],
  series: [],
};

type Family = { name: string; help: string; type: string; metrics: { value?: string; labels?: Record<string, string> }[] };

describe('Prometheus exposition', () => {
  const text = prometheusText(metrics);
  const families = parsePrometheus(text) as Family[];
  const family = (name: string) => families.find((f) => f.name === name)!;
  const value = (name: string, labels: Record<string, string>) =>
    family(name).metrics.find((m) => JSON.stringify(m.labels) === JSON.stringify(labels))?.value;

  it('parses, one family per figure, each with HELP and TYPE', () => {
    expect(families.map((f) => [f.name, f.type])).toEqual([
      ['edge_tools_metrics_window_seconds', 'GAUGE'],
      ['edge_tools_executions', 'GAUGE'],
      ['edge_tools_execution_failures', 'GAUGE'],
      ['edge_tools_execution_success_ratio', 'GAUGE'],
      ['edge_tools_execution_duration_seconds', 'SUMMARY'],
      ['edge_tools_queue_wait_seconds', 'SUMMARY'],
      ['edge_tools_retried_executions', 'GAUGE'],
      ['edge_tools_performance_warnings', 'GAUGE'],
      ['edge_tools_refusals', 'GAUGE'],
    ]);
    for (const f of families) expect(f.help, f.name).not.toBe('');
    expect(text.endsWith('\n')).toBe(true);
  });

  it('carries the JSON figures, with label values escaped and read back intact', () => {
    expect(family('edge_tools_metrics_window_seconds').metrics[0]!.value).toBe('86400');
    expect(value('edge_tools_executions', { tool: 'log-mood', status: 'success' })).toBe('3');
    expect(value('edge_tools_executions', { tool: 'log-mood', status: 'failure' })).toBe('1');
    expect(value('edge_tools_execution_failures', { tool: 'log-mood', code: 'NOT_FOUND' })).toBe('1');
    expect(value('edge_tools_execution_success_ratio', { tool: 'log-mood' })).toBe('0.75');
    expect(value('edge_tools_refusals', { tool: 'odd"tool\\name', reason: 'validation' })).toBe('2');
    expect(value('edge_tools_refusals', { tool: 'odd"tool\\name', reason: 'rate_limit' })).toBe('1');
    expect(value('edge_tools_retried_executions', { tool: 'log-mood' })).toBe('1');
    // A tool without executions has no ratio and no latency summary.
    expect(value('edge_tools_execution_success_ratio', { tool: 'odd"tool\\name' })).toBeUndefined();
  });

  it('writes latency summaries in seconds, with quantiles, _sum and _count per tool', () => {
    const lines = text.split('\n').filter((line) => line.startsWith('edge_tools_execution_duration_seconds'));
    expect(lines).toEqual([
      'edge_tools_execution_duration_seconds{tool="log-mood",quantile="0.5"} 0.02',
      'edge_tools_execution_duration_seconds{tool="log-mood",quantile="0.95"} 0.0485',
      'edge_tools_execution_duration_seconds{tool="log-mood",quantile="0.99"} 0.0497',
      'edge_tools_execution_duration_seconds_sum{tool="log-mood"} 0.1',
      'edge_tools_execution_duration_seconds_count{tool="log-mood"} 4',
    ]);
    expect(text).toContain('edge_tools_queue_wait_seconds{tool="log-mood",quantile="0.95"} 0.0075\n');
    expect(text).toContain('edge_tools_queue_wait_seconds_sum{tool="log-mood"} 0.008\n');
  });
});
