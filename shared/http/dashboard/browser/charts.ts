/**
 * The dashboard's charts, drawn as SVG: latency per tool on a logarithmic scale (one slow call
 * does not flatten the rest), volume over time, and each tool's sparklines. Every mark carries a
 * `<title>`, which a pointer hovering it shows and assistive technology reads.
 */
import type { Metrics } from './api.ts';
import { ms, shape, titled } from './dom.ts';

type Tool = Metrics['tools'][number];

/** The plot area of the wide charts, in viewBox units. */
const CHART = { width: 600, left: 160, right: 16, top: 8, rowHeight: 28, axisHeight: 22 };

/** The percentiles drawn per tool, in order, with their labels. */
const MARKS = [
  ['p50', 'p50'],
  ['p95', 'p95'],
  ['p99', 'p99'],
  ['max', 'max'],
] as const;

/** Milliseconds as an axis label: 1 ms, 10 ms, 100 ms, 1 s, 10 s. */
function tickLabel(value: number): string {
  return value >= 1000 ? `${value / 1000} s` : `${value} ms`;
}

/**
 * Latency per tool: one row per tool, a line from its p50 to its slowest call and a mark at each
 * percentile, on a log scale spanning whole powers of ten.
 */
export function drawLatency(svg: SVGSVGElement, tools: readonly Tool[]): void {
  const measured = tools.filter((tool) => tool.duration_ms.max !== null);
  const values = measured.flatMap((tool) => MARKS.map(([key]) => tool.duration_ms[key] ?? 0)).filter((value) => value > 0);
  const low = 10 ** Math.floor(Math.log10(Math.max(0.1, Math.min(1, ...values))));
  const high = 10 ** Math.max(Math.ceil(Math.log10(Math.max(10, ...values))), Math.log10(low) + 1);
  const plotWidth = CHART.width - CHART.left - CHART.right;
  const x = (value: number) =>
    CHART.left + ((Math.log10(Math.max(value, low)) - Math.log10(low)) / (Math.log10(high) - Math.log10(low))) * plotWidth;
  const rows = Math.max(measured.length, 1);
  const bottom = CHART.top + rows * CHART.rowHeight;
  const height = bottom + CHART.axisHeight;

  svg.setAttribute('viewBox', `0 0 ${CHART.width} ${height}`);
  svg.setAttribute(
    'aria-label',
    `Latency per tool, log scale from ${tickLabel(low)} to ${tickLabel(high)}: p50, p95, p99 and the slowest call`,
  );
  const children: SVGElement[] = [];
  for (let tick = low; tick <= high * 1.0001; tick *= 10) {
    children.push(
      shape('line', { class: 'grid', x1: x(tick), y1: CHART.top, x2: x(tick), y2: bottom }),
      shape('text', { x: x(tick), y: height - 6, 'text-anchor': 'middle' }, tickLabel(Number(tick.toPrecision(1)))),
    );
  }
  if (measured.length === 0) children.push(shape('text', { x: CHART.left, y: CHART.top + 16 }, 'No executions in this window.'));
  measured.forEach((tool, i) => {
    const y = CHART.top + i * CHART.rowHeight + CHART.rowHeight / 2;
    const d = tool.duration_ms;
    const summary = `${tool.tool}: p50 ${ms(d.p50)} ms, p95 ${ms(d.p95)} ms, p99 ${ms(d.p99)} ms, slowest ${ms(d.max)} ms (${tool.calls} calls)`;
    const row = titled(shape('g', { class: 'tool-latency', 'data-tool': tool.tool }), summary);
    row.append(
      shape(
        'text',
        { x: CHART.left - 8, y: y + 4, 'text-anchor': 'end' },
        tool.tool.length > 24 ? `${tool.tool.slice(0, 23)}…` : tool.tool,
      ),
      shape('line', { class: 'range', x1: x(d.p50 ?? low), y1: y, x2: x(d.max ?? low), y2: y }),
    );
    for (const [key, label] of MARKS) {
      const value = d[key];
      if (value === null) continue;
      row.append(
        titled(
          shape('circle', { class: key, cx: x(value).toFixed(1), cy: y, r: key === 'max' ? 3 : 4.5 }),
          `${tool.tool} ${label}: ${ms(value)} ms`,
        ),
      );
    }
    children.push(row);
  });
  children.push(shape('line', { class: 'axis', x1: CHART.left, y1: bottom, x2: CHART.width - CHART.right, y2: bottom }));
  svg.replaceChildren(...children);
}

/** Calls and failures per bucket of the window, as bars. */
export function drawVolume(svg: SVGSVGElement, series: Metrics['series'], bucketSeconds: number): void {
  const width = 600;
  const height = 160;
  const [left, top, bottom] = [36, 8, 136];
  const peak = Math.max(1, ...series.map((point) => point.calls));
  const step = (width - left - 8) / Math.max(series.length, 1);
  const y = (value: number) => bottom - (value / peak) * (bottom - top);
  const time = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('aria-label', `Calls and failures per ${bucketSeconds / 60} minutes, up to ${peak} calls`);
  const children: SVGElement[] = [
    shape('line', { class: 'axis', x1: left, y1: bottom, x2: width - 8, y2: bottom }),
    shape('text', { x: left - 6, y: top + 10, 'text-anchor': 'end' }, String(peak)),
    shape('text', { x: left - 6, y: bottom, 'text-anchor': 'end' }, '0'),
  ];
  if (series.length > 0) {
    children.push(
      shape('text', { x: left, y: height - 6 }, time(series[0]!.start)),
      shape('text', { x: width - 8, y: height - 6, 'text-anchor': 'end' }, time(series.at(-1)!.start)),
    );
  }
  series.forEach((point, i) => {
    const bar = titled(
      shape('g', { class: 'bucket' }),
      `${time(point.start)}: ${point.calls} calls, ${point.failures} failed, p95 ${ms(point.duration_ms_p95)} ms`,
    );
    const x = left + i * step + step * 0.15;
    // Every bucket has a hover target, the empty ones too.
    bar.append(shape('rect', { class: 'hover', x: left + i * step, y: top, width: step, height: bottom - top }));
    if (point.calls > 0)
      bar.append(shape('rect', { class: 'calls', x, y: y(point.calls), width: step * 0.7, height: bottom - y(point.calls) }));
    if (point.failures > 0)
      bar.append(shape('rect', { class: 'failures', x, y: y(point.failures), width: step * 0.7, height: bottom - y(point.failures) }));
    children.push(bar);
  });
  svg.replaceChildren(...children);
}

/** A tool's sparklines: its calls (line) and failures (bars) per bucket, on one small scale. */
export function sparkline(tool: Tool, bucketSeconds: number): SVGElement {
  const [width, height] = [120, 28];
  const { calls, failures } = tool.series;
  const peak = Math.max(1, ...calls);
  const step = width / Math.max(calls.length - 1, 1);
  const y = (value: number) => height - 2 - (value / peak) * (height - 4);
  const failed = failures.reduce((sum, value) => sum + value, 0);
  const svg = shape('svg', { class: 'sparkline', viewBox: `0 0 ${width} ${height}`, role: 'img' });
  const label = `${tool.tool}: ${tool.calls} calls, at most ${Math.max(0, ...calls)} per ${bucketSeconds / 60} minutes; ${failed} failed`;
  svg.setAttribute('aria-label', label);
  svg.append(shape('title', {}, label));
  failures.forEach((value, i) => {
    if (value > 0)
      svg.append(
        shape('rect', { class: 'failures', x: Math.max(0, i * step - 1.5), y: y(value), width: 3, height: height - 2 - y(value) }),
      );
  });
  svg.append(
    shape('polyline', { class: 'calls', points: calls.map((value, i) => `${(i * step).toFixed(1)},${y(value).toFixed(1)}`).join(' ') }),
  );
  return svg;
}
