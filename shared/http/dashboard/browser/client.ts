/**
 * The dashboard's browser code, bundled by `npm run build:dashboard` into the page the worker
 * serves (../page.ts). It asks for an API key, then reads the window's metrics, calls and
 * connected clients, and reads them again every few seconds until paused.
 */
import { KeyRefused, api, storeKey, storedKey, type Metrics } from './api.ts';
import { offerTools, refreshCalls, setUpFilters } from './calls.ts';
import { drawLatency, drawVolume, sparkline } from './charts.ts';
import { refreshClients } from './clients.ts';
import { byId, count, element, ms, percent, when } from './dom.ts';

/** How often the page reads everything again while live. */
const REFRESH_EVERY_MS = 5_000;

let live = true;
let timer: ReturnType<typeof setTimeout> | undefined;
let running: Promise<void> | undefined;
let again = false;

function showMessage(text: string): void {
  byId('message').textContent = text;
  byId('message').hidden = !text;
}

function showKeyForm(): void {
  clearTimeout(timer);
  byId('key-form').hidden = false;
  byId('controls').hidden = true;
  byId('report').hidden = true;
  byId('api-key').focus();
}

/**
 * Reads everything now, or once more right after the reading under way (whose filters may be
 * stale); then plans the next reading while live.
 */
function refresh(): void {
  if (running) {
    again = true;
    return;
  }
  clearTimeout(timer);
  running = readAll().finally(() => {
    running = undefined;
    if (again) {
      again = false;
      refresh();
    } else if (live && storedKey()) timer = setTimeout(refresh, REFRESH_EVERY_MS);
  });
}

async function readAll(): Promise<void> {
  const status = byId('status');
  try {
    const metrics = await api<Metrics>(`/metrics?window=${encodeURIComponent(byId<HTMLSelectElement>('window').value)}`);
    byId('key-form').hidden = true;
    byId('controls').hidden = false;
    byId('report').hidden = false;
    offerTools(metrics.tools.map((tool) => tool.tool));
    await Promise.all([refreshCalls(metrics.window.since), refreshClients()]);
    drawTotals(metrics.totals);
    drawTools(metrics);
    drawLatency(byId<SVGSVGElement>('latency-chart'), metrics.tools);
    drawVolume(byId<SVGSVGElement>('volume-chart'), metrics.series, metrics.window.bucket_seconds);
    showMessage('');
    status.textContent = `Updated ${new Date().toLocaleTimeString()} · since ${when(metrics.window.since)}`;
  } catch (error) {
    if (error instanceof KeyRefused) {
      storeKey(null);
      showKeyForm();
    }
    showMessage(error instanceof Error ? error.message : String(error));
  }
}

function drawTotals(totals: Metrics['totals']): void {
  const cards: [string, string][] = [
    ['Calls', count(totals.calls)],
    ['Success rate', percent(totals.success_rate)],
    ['Failures', count(totals.failures)],
    ['p95 duration ms', ms(totals.duration_ms.p95)],
    ['Queue wait p95 ms', ms(totals.queued_ms.p95)],
    ['Invalid input refused', count(totals.validation_refusals)],
    ['Rate limited', count(totals.rate_limit_refusals)],
    ['No slot (busy)', count(totals.busy_refusals)],
  ];
  byId('totals').replaceChildren(
    ...cards.map(([label, value]) => {
      const card = element('div');
      card.append(element('dt', label), element('dd', value));
      return card;
    }),
  );
}

/** One card per tool: its figures and its sparklines. */
function drawTools(metrics: Metrics): void {
  const cards = metrics.tools.map((tool) => {
    const card = element('li', null, { 'data-tool': tool.tool });
    const codes = Object.entries(tool.failures_by_code)
      .map(([code, n]) => `${code} ${n}`)
      .join(', ');
    const refused = tool.validation_refusals + tool.rate_limit_refusals + tool.busy_refusals;
    const figures = element('dl', null, { class: 'figures' });
    for (const [term, value] of [
      ['Calls', count(tool.calls)],
      ['Success rate', percent(tool.success_rate)],
      ['p50 / p95 / p99 ms', `${ms(tool.duration_ms.p50)} / ${ms(tool.duration_ms.p95)} / ${ms(tool.duration_ms.p99)}`],
      ['Errors', codes ? `${tool.failures} (${codes})` : count(tool.failures)],
      ['Queue p95 ms', ms(tool.queued_ms.p95)],
      ['Refused', count(refused)],
    ]) {
      figures.append(element('dt', term), element('dd', value));
    }
    card.append(element('h3', tool.tool), sparkline(tool, metrics.window.bucket_seconds), figures);
    return card;
  });
  byId('tools').replaceChildren(...cards);
  byId('no-tools').hidden = cards.length > 0;
}

/** Stops or resumes the live updates; the button says which and is pressed while paused. */
function toggleLive(): void {
  live = !live;
  const button = byId('live');
  button.textContent = live ? 'Pause' : 'Resume';
  button.setAttribute('aria-pressed', String(!live));
  byId('live-state').textContent = live ? `Live: updates every ${REFRESH_EVERY_MS / 1000} s.` : 'Paused.';
  if (live) refresh();
  else clearTimeout(timer);
}

byId('key-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = byId<HTMLInputElement>('api-key');
  const key = input.value.trim();
  input.value = '';
  if (!key) return;
  storeKey(key);
  refresh();
});
byId('live').addEventListener('click', toggleLive);
byId('refresh').addEventListener('click', refresh);
byId('window').addEventListener('change', refresh);
byId('forget').addEventListener('click', () => {
  storeKey(null);
  showKeyForm();
});
setUpFilters(refresh);

if (storedKey()) refresh();
else showKeyForm();
