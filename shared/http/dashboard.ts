/**
 * `GET /dashboard`: one self-contained page, served by the worker, that reads the project's
 * metrics and executions through the JSON APIs (`/metrics`, `/executions`) with the API key the
 * person enters. The key stays in the tab's sessionStorage and travels only as a bearer token to
 * this worker: no cookies, so no CSRF surface. The page itself holds no data (it needs no key to
 * load), loads nothing from elsewhere (inline script and style under a per-response CSP nonce),
 * and renders every value as text, never as markup.
 */
import { html, raw } from 'hono/html';

/** The dashboard page, with a fresh CSP nonce. */
export async function dashboardPage(): Promise<Response> {
  const nonce = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
  const page = await html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>edge-tools · observability</title>
<style nonce="${nonce}">${raw(STYLE)}</style>
</head>
<body>
<header>
  <h1>edge-tools <span>observability</span></h1>
  <form id="key-form">
    <label for="api-key">API key</label>
    <input id="api-key" name="api-key" type="password" autocomplete="off" spellcheck="false" placeholder="et_…" required>
    <button type="submit">Open</button>
    <p class="note">Kept in this tab only (sessionStorage) and sent to this worker's JSON APIs as a bearer token.</p>
  </form>
  <div id="controls" hidden>
    <label for="window">Window</label>
    <select id="window">
      <option value="1h">last hour</option>
      <option value="24h" selected>last 24 hours</option>
      <option value="7d">last 7 days</option>
      <option value="30d">last 30 days</option>
    </select>
    <button id="refresh" type="button">Refresh</button>
    <button id="forget" type="button" class="secondary">Forget key</button>
    <span id="status" role="status"></span>
  </div>
</header>
<p id="message" role="alert" hidden></p>
<main id="report" hidden>
  <section aria-labelledby="totals-title">
    <h2 id="totals-title">Totals</h2>
    <dl id="totals" class="cards"></dl>
  </section>
  <section aria-labelledby="tools-title">
    <h2 id="tools-title">Per tool</h2>
    <div class="scroll">
      <table id="tools">
        <thead><tr>
          <th scope="col">Tool</th><th scope="col">Calls</th><th scope="col">Success rate</th>
          <th scope="col">p50 ms</th><th scope="col">p95 ms</th><th scope="col">p99 ms</th>
          <th scope="col">Errors</th><th scope="col">Error codes</th><th scope="col">Queue p95 ms</th><th scope="col">Refused</th>
        </tr></thead>
        <tbody></tbody>
      </table>
    </div>
  </section>
  <section class="charts">
    <figure><figcaption>Latency over time (ms): <span class="p50">p50</span> and <span class="p95">p95</span></figcaption><svg id="latency-chart" role="img" viewBox="0 0 600 220"></svg></figure>
    <figure><figcaption>Volume over time: <span class="calls">calls</span> and <span class="failures">failures</span></figcaption><svg id="volume-chart" role="img" viewBox="0 0 600 220"></svg></figure>
  </section>
  <section aria-labelledby="failures-title">
    <h2 id="failures-title">Recent failures</h2>
    <div class="scroll">
      <table id="failures">
        <thead><tr><th scope="col">Time</th><th scope="col">Tool</th><th scope="col">Code</th><th scope="col">Duration ms</th><th scope="col">Attempts</th><th scope="col">Trace</th></tr></thead>
        <tbody></tbody>
      </table>
    </div>
    <p id="no-failures" hidden>No failures in this window.</p>
  </section>
</main>
<dialog id="trace" aria-labelledby="trace-title">
  <div class="dialog-head"><h2 id="trace-title">Trace</h2><button id="close-trace" type="button">Close</button></div>
  <dl id="trace-facts" class="facts"></dl>
  <h3>Error</h3><pre id="trace-error"></pre>
  <h3>Stack</h3><pre id="trace-stack"></pre>
  <h3>Retries</h3><pre id="trace-retries"></pre>
  <h3>Input</h3><pre id="trace-input"></pre>
</dialog>
<script nonce="${nonce}">${raw(SCRIPT)}</script>
</body>
</html>`;
  return new Response(page.toString(), {
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
    },
  });
}

const STYLE = `
:root { color-scheme: light dark; --fg: #1d2330; --muted: #5d6675; --bg: #f6f7f9; --card: #fff; --line: #d9dde3; --accent: #2f6fdb; --bad: #c8372d; --good: #1f8a4c; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8ec; --muted: #9aa3b2; --bg: #14171c; --card: #1d2128; --line: #343a44; --accent: #6ea0ff; --bad: #ff6b60; --good: #4cc383; } }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header, main, #message { max-width: 1200px; margin: 0 auto; padding: 12px 16px; }
h1 { font-size: 1.3rem; margin: 4px 0 10px; } h1 span { color: var(--muted); font-weight: 400; }
h2 { font-size: 1.05rem; margin: 22px 0 8px; } h3 { font-size: .95rem; margin: 14px 0 4px; }
form, #controls { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
input, select, button { font: inherit; padding: 6px 10px; border-radius: 6px; border: 1px solid var(--line); background: var(--card); color: var(--fg); }
input { min-width: 0; flex: 1 1 260px; }
button { background: var(--accent); color: #fff; border-color: var(--accent); cursor: pointer; }
button.secondary, #close-trace { background: var(--card); color: var(--fg); border-color: var(--line); }
.note, #status { color: var(--muted); font-size: .85rem; margin: 0; flex-basis: 100%; }
#status { flex-basis: auto; }
#message { color: var(--bad); font-weight: 600; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 10px; margin: 0; }
.cards div { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
.cards dt { color: var(--muted); font-size: .8rem; } .cards dd { margin: 2px 0 0; font-size: 1.35rem; font-weight: 600; }
.scroll { overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: right; padding: 7px 10px; border-bottom: 1px solid var(--line); white-space: nowrap; }
th:first-child, td:first-child, #failures :is(th, td):is(:nth-child(2), :nth-child(3)), #tools :is(th, td):nth-child(8) { text-align: left; }
thead th { color: var(--muted); font-weight: 600; font-size: .82rem; }
tbody tr:last-child > * { border-bottom: 0; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 12px; margin-top: 18px; }
figure { margin: 0; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px; }
figcaption { font-size: .85rem; color: var(--muted); margin-bottom: 6px; }
svg { width: 100%; height: auto; display: block; }
svg text { fill: var(--muted); font-size: 11px; } svg .axis { stroke: var(--line); }
.p50 { color: var(--accent); } .p95, .failures { color: var(--bad); } .calls { color: var(--muted); }
svg .p50 { stroke: var(--accent); fill: none; stroke-width: 2; } svg .p95 { stroke: var(--bad); fill: none; stroke-width: 2; }
svg .calls { fill: var(--muted); opacity: .45; } svg .failures { fill: var(--bad); }
dialog { width: min(900px, 96vw); max-height: 90vh; border: 1px solid var(--line); border-radius: 10px; background: var(--card); color: var(--fg); padding: 14px 16px; }
dialog::backdrop { background: rgb(0 0 0 / 45%); }
.dialog-head { display: flex; justify-content: space-between; align-items: center; gap: 8px; } .dialog-head h2 { margin: 0; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 14px; margin: 10px 0; font-size: .9rem; }
.facts dt { color: var(--muted); } .facts dd { margin: 0; overflow-wrap: anywhere; }
pre { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 8px; overflow: auto; max-height: 16rem; font-size: .8rem; margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
@media (max-width: 640px) { body { font-size: 14px; } th, td { padding: 6px 7px; } .cards dd { font-size: 1.15rem; } }
`;

// The page's script: plain browser JavaScript, no build step. Values reach the page through
// textContent and SVG attributes only.
const SCRIPT = `
(() => {
  'use strict';
  const STORAGE_KEY = 'edge-tools-api-key';
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const $ = (id) => document.getElementById(id);
  let apiKey = sessionStorage.getItem(STORAGE_KEY);

  function element(tag, text, attributes) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
    return node;
  }
  function shape(tag, attributes, text) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
    if (text !== undefined) node.textContent = text;
    return node;
  }
  const ms = (value) => (value === null || value === undefined ? '—' : Number(value).toFixed(1));
  const percent = (value) => (value === null || value === undefined ? '—' : (value * 100).toFixed(1) + ' %');
  const count = (value) => Number(value).toLocaleString('en-US');
  const when = (iso) => new Date(iso).toLocaleString();

  function showMessage(text) {
    $('message').textContent = text || '';
    $('message').hidden = !text;
  }
  function showForm() {
    $('key-form').hidden = false;
    $('controls').hidden = true;
    $('report').hidden = true;
    $('api-key').focus();
  }
  function forget() {
    apiKey = null;
    sessionStorage.removeItem(STORAGE_KEY);
    showForm();
  }

  async function api(path) {
    let response;
    try {
      response = await fetch(path, { headers: { authorization: 'Bearer ' + apiKey }, cache: 'no-store' });
    } catch (error) {
      throw new Error('The worker could not be reached: ' + error.message);
    }
    const body = await response.json().catch(() => null);
    if (!body) throw new Error('The worker answered ' + response.status + ' without the expected JSON.');
    if (response.status === 401) {
      forget();
      throw new Error('The API key was refused: ' + body.message);
    }
    if (!body.success) throw new Error(body.message);
    return body.data;
  }

  async function refresh() {
    showMessage('');
    $('status').textContent = 'Loading…';
    $('refresh').disabled = true;
    try {
      const metrics = await api('/metrics?window=' + encodeURIComponent($('window').value));
      const failures = await api('/executions?status=failure&limit=20&since=' + encodeURIComponent(metrics.window.since));
      $('key-form').hidden = true;
      $('controls').hidden = false;
      $('report').hidden = false;
      renderTotals(metrics.totals);
      renderTools(metrics.tools);
      renderLatency(metrics.series);
      renderVolume(metrics.series);
      renderFailures(failures.executions);
      $('status').textContent = 'Updated ' + new Date().toLocaleTimeString() + ' · ' + when(metrics.window.since) + ' to ' + when(metrics.window.until);
    } catch (error) {
      $('status').textContent = '';
      showMessage(error.message);
    } finally {
      $('refresh').disabled = false;
    }
  }

  function renderTotals(totals) {
    const cards = [
      ['Calls', count(totals.calls)],
      ['Success rate', percent(totals.success_rate)],
      ['Failures', count(totals.failures)],
      ['p95 duration ms', ms(totals.duration_ms.p95)],
      ['Queue wait p95 ms', ms(totals.queued_ms.p95)],
      ['Invalid input refused', count(totals.validation_refusals)],
      ['Rate limited', count(totals.rate_limit_refusals)],
      ['No slot (busy)', count(totals.busy_refusals)],
    ];
    $('totals').replaceChildren(...cards.map(([label, value]) => {
      const card = element('div');
      card.append(element('dt', label), element('dd', value));
      return card;
    }));
  }

  function renderTools(tools) {
    const rows = tools.map((tool) => {
      const row = element('tr');
      const name = element('th', tool.tool, { scope: 'row' });
      const codes = Object.entries(tool.failures_by_code).map(([code, n]) => code + ' ' + n).join(', ');
      const refused = tool.validation_refusals + tool.rate_limit_refusals + tool.busy_refusals;
      row.append(
        name,
        element('td', count(tool.calls)),
        element('td', percent(tool.success_rate)),
        element('td', ms(tool.duration_ms.p50)),
        element('td', ms(tool.duration_ms.p95)),
        element('td', ms(tool.duration_ms.p99)),
        element('td', count(tool.failures)),
        element('td', codes || '—'),
        element('td', ms(tool.queued_ms.p95)),
        element('td', count(refused), { title: tool.validation_refusals + ' invalid input, ' + tool.rate_limit_refusals + ' rate limited, ' + tool.busy_refusals + ' busy' }),
      );
      return row;
    });
    if (rows.length === 0) {
      const row = element('tr');
      row.append(element('td', 'No calls in this window.', { colspan: '10' }));
      rows.push(row);
    }
    $('tools').tBodies[0].replaceChildren(...rows);
  }

  const CHART = { width: 600, height: 220, left: 44, right: 8, top: 10, bottom: 26 };
  function frame(svg, series, max, label) {
    const plotWidth = CHART.width - CHART.left - CHART.right;
    const plotHeight = CHART.height - CHART.top - CHART.bottom;
    const x = (i) => CHART.left + (series.length <= 1 ? plotWidth / 2 : (i / (series.length - 1)) * plotWidth);
    const y = (value) => CHART.top + plotHeight - (max > 0 ? (value / max) * plotHeight : 0);
    const bottom = CHART.top + plotHeight;
    svg.replaceChildren(
      shape('title', {}, label),
      shape('line', { class: 'axis', x1: CHART.left, y1: bottom, x2: CHART.width - CHART.right, y2: bottom }),
      shape('line', { class: 'axis', x1: CHART.left, y1: CHART.top, x2: CHART.left, y2: bottom }),
      shape('text', { x: CHART.left - 6, y: CHART.top + 10, 'text-anchor': 'end' }, String(Math.round(max * 10) / 10)),
      shape('text', { x: CHART.left - 6, y: bottom, 'text-anchor': 'end' }, '0'),
    );
    if (series.length > 0) {
      const time = (iso) => new Date(iso).toLocaleString([], { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
      svg.append(
        shape('text', { x: CHART.left, y: CHART.height - 6 }, time(series[0].start)),
        shape('text', { x: CHART.width - CHART.right, y: CHART.height - 6, 'text-anchor': 'end' }, time(series[series.length - 1].start)),
      );
    }
    svg.setAttribute('aria-label', label);
    return { x, y, bottom, step: plotWidth / Math.max(series.length, 1) };
  }

  function renderLatency(series) {
    const max = Math.max(0, ...series.map((point) => point.duration_ms_p95 || 0));
    const svg = $('latency-chart');
    const { x, y } = frame(svg, series, max, 'Latency per bucket: p50 and p95 in milliseconds, up to ' + ms(max) + ' ms');
    for (const key of ['p50', 'p95']) {
      let d = '';
      let pen = 'M';
      series.forEach((point, i) => {
        const value = point['duration_ms_' + key];
        if (value === null) { pen = 'M'; return; }
        d += pen + x(i).toFixed(1) + ' ' + y(value).toFixed(1) + ' ';
        pen = 'L';
      });
      if (d) svg.append(shape('path', { class: key, d }));
      series.forEach((point, i) => {
        const value = point['duration_ms_' + key];
        if (value !== null) svg.append(shape('circle', { class: key, cx: x(i), cy: y(value), r: 1.8 }));
      });
    }
  }

  function renderVolume(series) {
    const max = Math.max(0, ...series.map((point) => point.calls));
    const svg = $('volume-chart');
    const { x, y, bottom, step } = frame(svg, series, max, 'Calls and failures per bucket, up to ' + max + ' calls');
    const width = Math.max(1, step * 0.7);
    series.forEach((point, i) => {
      if (point.calls > 0) svg.append(shape('rect', { class: 'calls', x: x(i) - width / 2, y: y(point.calls), width, height: bottom - y(point.calls) }));
      if (point.failures > 0) svg.append(shape('rect', { class: 'failures', x: x(i) - width / 2, y: y(point.failures), width, height: bottom - y(point.failures) }));
    });
  }

  function renderFailures(executions) {
    $('no-failures').hidden = executions.length > 0;
    $('failures').parentElement.hidden = executions.length === 0;
    $('failures').tBodies[0].replaceChildren(...executions.map((execution) => {
      const row = element('tr');
      const open = element('button', 'View trace', { type: 'button', class: 'secondary', 'data-trace-id': execution.trace_id });
      open.addEventListener('click', () => openTrace(execution.trace_id));
      const cell = element('td');
      cell.append(open);
      row.append(
        element('td', when(execution.started_at)),
        element('td', execution.tool),
        element('td', execution.error_code),
        element('td', ms(execution.duration_ms)),
        element('td', execution.attempts),
        cell,
      );
      return row;
    }));
  }

  const json = (value) => (value === null || value === undefined ? '—' : JSON.stringify(value, null, 2));
  function stackOf(error) {
    const stacks = [];
    for (let cause = error && error.cause, depth = 0; cause && depth < 5; cause = cause.cause, depth++) {
      stacks.push(cause.stack || cause.message || JSON.stringify(cause));
    }
    return stacks.join('\\n\\ncaused by ') || '—';
  }

  async function openTrace(traceId) {
    showMessage('');
    try {
      const execution = await api('/executions/' + encodeURIComponent(traceId));
      const facts = [
        ['Trace id', execution.trace_id],
        ['Tool', execution.tool],
        ['Status', execution.status],
        ['Error code', execution.error_code || '—'],
        ['Started', when(execution.started_at)],
        ['Duration ms', ms(execution.duration_ms)],
        ['Queue wait ms', ms(execution.queued_ms)],
        ['Attempts', execution.attempts],
        ['Performance warning', execution.performance_warning ? 'yes' : 'no'],
        ['API key', execution.actor.api_key_name ? execution.actor.api_key_name + ' (' + execution.actor.api_key_id + ')' : execution.actor.api_key_id || '—'],
        ['OpenTelemetry trace', execution.otel.trace_id || '—'],
        ['Span / parent span', (execution.otel.span_id || '—') + ' / ' + (execution.otel.parent_span_id || '—')],
      ];
      $('trace-facts').replaceChildren(...facts.flatMap(([label, value]) => [element('dt', label), element('dd', value)]));
      const error = execution.error ? Object.fromEntries(Object.entries(execution.error).filter(([name]) => name !== 'cause')) : null;
      $('trace-error').textContent = json(error);
      $('trace-stack').textContent = stackOf(execution.error);
      $('trace-retries').textContent = execution.retry_errors.length === 0 ? 'None'
        : execution.retry_errors.map((retry) => 'attempt ' + retry.attempt + ': ' + retry.code + ' ' + retry.message).join('\\n');
      $('trace-input').textContent = json(execution.input);
      $('trace-title').textContent = 'Trace of ' + execution.tool;
      $('trace').showModal();
    } catch (error) {
      showMessage(error.message);
    }
  }

  $('key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    apiKey = $('api-key').value.trim();
    $('api-key').value = '';
    if (!apiKey) return;
    sessionStorage.setItem(STORAGE_KEY, apiKey);
    refresh();
  });
  $('refresh').addEventListener('click', refresh);
  $('window').addEventListener('change', refresh);
  $('forget').addEventListener('click', forget);
  $('close-trace').addEventListener('click', () => $('trace').close());

  if (apiKey) refresh(); else showForm();
})();
`;
