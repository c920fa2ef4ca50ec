/**
 * The Prometheus exposition of the cumulative counters, judged by Prometheus's own linter
 * (`promtool check metrics`, from Debian's prometheus package: naming, units, `_total`, histogram
 * shape) and read back by an independent parser (parse-prometheus-text-format, a port of the
 * Prometheus Python client's parser): counts and histograms must be those of known calls, every
 * registered tool must be there at 0, and label values must survive escaping.
 */
import { spawnSync } from 'node:child_process';
import parsePrometheus from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../shared/core/contract.ts';
import {
  DURATION_BUCKETS,
  executionCounts,
  refusalCount,
  type CounterRow,
  type ExecutionCount,
} from '../../shared/observability/counters.ts';
import { prometheusText } from '../../shared/observability/prometheus.ts';

const hasPromtool = spawnSync('promtool', ['--version']).status === 0;
if (!hasPromtool) console.warn("\n!!! promtool not found: the Prometheus lint check is SKIPPED. Install Debian's prometheus package.\n");

const PROJECT = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';
const ODD = 'odd"tool\\name';

/** Adds rows up as the database's upsert does. */
function totalsOf(rows: CounterRow[]): CounterRow[] {
  const byKey = new Map<string, CounterRow>();
  for (const row of rows) {
    const key = JSON.stringify([row.projectId, row.tool, row.name, row.outcome, row.code, row.le]);
    const found = byKey.get(key);
    byKey.set(key, found ? { ...found, value: found.value + row.value } : { ...row });
  }
  return [...byKey.values()];
}

const execution = (overrides: Partial<ExecutionCount>): ExecutionCount => ({
  projectId: PROJECT,
  tool: 'log-mood',
  durationMs: 12,
  queuedMs: 0,
  attempts: 1,
  slow: false,
  leaseLost: false,
  ...overrides,
});

// log-mood: durations 3 ms, 12 ms, 12 ms, 70 ms (success) and 6,000 ms (NOT_FOUND, slow, retried twice).
const rows = totalsOf([
  ...executionCounts(execution({ durationMs: 3 })),
  ...executionCounts(execution({ durationMs: 12 })),
  ...executionCounts(execution({ durationMs: 12, queuedMs: 40 })),
  ...executionCounts(execution({ durationMs: 70 })),
  ...executionCounts(execution({ durationMs: 6_000, errorCode: 'NOT_FOUND', attempts: 3, slow: true, leaseLost: true })),
  ...executionCounts(execution({ durationMs: 120_000, tool: ODD })),
  ...refusalCount(PROJECT, 'log-mood', 'VALIDATION_ERROR'),
  ...refusalCount(PROJECT, 'log-mood', 'VALIDATION_ERROR'),
  ...refusalCount(PROJECT, 'log-mood', 'RATE_LIMITED'),
]);

type Family = { name: string; help: string; type: string; metrics: { value?: string; labels?: Record<string, string> }[] };

describe('Prometheus exposition', () => {
  const text = prometheusText({ projects: [PROJECT, OTHER], rows }, ['log-mood', 'add-document']);
  const families = parsePrometheus(text) as Family[];
  const family = (name: string) => families.find((f) => f.name === name)!;
  /** A histogram's samples, read from its lines (the parser folds labelled histograms into one entry). */
  const histogram = (name: string, project: string, tool: string) => {
    const labels = `project="${project}",tool="${tool.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
    const sampleOf = (line: string) => Number(line.slice(line.lastIndexOf(' ') + 1));
    const lines = text.split('\n');
    const buckets = new Map(
      lines
        .filter((line) => line.startsWith(`${name}_bucket{${labels},le=`))
        .map((line) => [/le="([^"]+)"/.exec(line)![1]!, sampleOf(line)]),
    );
    const single = (suffix: string) => lines.filter((line) => line.startsWith(`${name}_${suffix}{${labels}} `)).map(sampleOf);
    return { buckets, sum: single('sum'), count: single('count') };
  };
  const find = (name: string, labels: Record<string, string>) =>
    family(name).metrics.find(
      (m) =>
        Object.entries(labels).every(([key, value]) => m.labels?.[key] === value) &&
        Object.keys(m.labels ?? {}).length === Object.keys(labels).length,
    );

  it.skipIf(!hasPromtool)("passes promtool's lint (naming, units, _total, histograms)", () => {
    const lint = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(lint.stdout + lint.stderr).toBe('');
    expect(lint.status).toBe(0);
  });

  it('has counters and histograms only, each with HELP', () => {
    expect(families.map((f) => [f.name, f.type])).toEqual([
      ['edge_tools_tool_calls_total', 'COUNTER'],
      ['edge_tools_tool_duration_seconds', 'HISTOGRAM'],
      ['edge_tools_tool_queue_wait_seconds', 'HISTOGRAM'],
      ['edge_tools_tool_retries_total', 'COUNTER'],
      ['edge_tools_tool_slow_calls_total', 'COUNTER'],
      ['edge_tools_tool_lease_warnings_total', 'COUNTER'],
    ]);
    for (const f of families) expect(f.help, f.name).not.toBe('');
    expect(text.endsWith('\n')).toBe(true);
  });

  it('counts calls by outcome and code', () => {
    const calls = (labels: Record<string, string>) =>
      find('edge_tools_tool_calls_total', { project: PROJECT, tool: 'log-mood', ...labels })?.value;
    expect(calls({ outcome: 'success' })).toBe('4');
    expect(calls({ outcome: 'failure', code: 'NOT_FOUND' })).toBe('1');
    expect(calls({ outcome: 'refused', code: 'VALIDATION_ERROR' })).toBe('2');
    expect(calls({ outcome: 'refused', code: 'RATE_LIMITED' })).toBe('1');
    expect(calls({ outcome: 'refused', code: 'BUSY' })).toBe('0');
    expect(find('edge_tools_tool_retries_total', { project: PROJECT, tool: 'log-mood' })?.value).toBe('2');
    expect(find('edge_tools_tool_slow_calls_total', { project: PROJECT, tool: 'log-mood' })?.value).toBe('1');
    expect(find('edge_tools_tool_lease_warnings_total', { project: PROJECT, tool: 'log-mood' })?.value).toBe('1');
  });

  it('shows every registered tool of every project at 0 before its first call, with every code', () => {
    const codes = Object.keys(ERROR_STATUS);
    for (const [project, tool] of [
      [OTHER, 'log-mood'],
      [PROJECT, 'add-document'],
      [OTHER, 'add-document'],
    ] as const) {
      const series = family('edge_tools_tool_calls_total').metrics.filter((m) => m.labels?.project === project && m.labels.tool === tool);
      expect(series).toHaveLength(1 + 2 * codes.length);
      expect(series.every((m) => m.value === '0')).toBe(true);
      expect(histogram('edge_tools_tool_duration_seconds', project, tool)).toMatchObject({ count: [0], sum: [0] });
    }
    // A tool no longer registered keeps its series where it has counts.
    expect(find('edge_tools_tool_calls_total', { project: PROJECT, tool: ODD, outcome: 'success' })?.value).toBe('1');
    expect(find('edge_tools_tool_calls_total', { project: OTHER, tool: ODD, outcome: 'success' })).toBeUndefined();
  });

  it('writes cumulative histograms in seconds whose buckets hold the observations at or under their bound', () => {
    const duration = histogram('edge_tools_tool_duration_seconds', PROJECT, 'log-mood');
    const observed = [0.003, 0.012, 0.012, 0.07, 6];
    expect([...duration.buckets.keys()]).toEqual([...DURATION_BUCKETS.map(String), '+Inf']);
    for (const [bound, count] of duration.buckets) {
      expect(count, `le=${bound}`).toBe(observed.filter((value) => value <= (bound === '+Inf' ? Infinity : Number(bound))).length);
    }
    expect(duration.count).toEqual([5]);
    expect(duration.sum[0]).toBeCloseTo(6.097, 9);
    const wait = histogram('edge_tools_tool_queue_wait_seconds', PROJECT, 'log-mood');
    expect(wait.buckets.get('0.001')).toBe(4);
    expect(wait.buckets.get('0.05')).toBe(5);
    expect(wait.sum[0]).toBeCloseTo(0.04, 9);
    // Beyond the last bound: only +Inf holds it (and the tool's name survives escaping).
    const odd = histogram('edge_tools_tool_duration_seconds', PROJECT, ODD);
    expect(odd.buckets.get('60')).toBe(0);
    expect(odd.buckets.get('+Inf')).toBe(1);
  });
});
