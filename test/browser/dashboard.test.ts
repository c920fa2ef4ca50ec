/**
 * The dashboard in a real browser: Debian's Chromium driven by playwright-core (no browser is
 * downloaded), against the real worker served by `wrangler dev` on 127.0.0.1 with the Neon
 * stand-in. The test makes known calls (successes, a conflict, a not-found, validation refusals,
 * and one call of another tenant), opens the page at 1440 px, enters the key, and reads the page
 * as a person would: the numbers shown must be those calls'. A call made after the page opened
 * must appear without a click; a success, a call answered with a warning and a refusal are opened; an OAuth client connected
 * through the real consent flow is revoked from the page, after which its token is refused. At
 * 390 px nothing may lie beyond the screen's edge. Every wait is on a condition of the page or the
 * worker, with generous ceilings only. Screenshots go to test-artifacts/ (git-ignored).
 *
 * Without Chromium (set CHROMIUM_PATH, or install Debian's `chromium`) it is skipped, loudly;
 * CI installs it.
 */
/// <reference lib="dom" />
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createProject, migrateDatabase, type CreatedProject } from '../../local/database.ts';
import { startNeonStandIn, type NeonStandIn } from '../../local/neon-http.ts';
import { startWranglerDev, type WranglerDev } from '../../local/wrangler-dev.ts';
import { hasChromium, launchChromium } from './chromium.ts';
import { connectClient, mcpStatus } from './oauth-client.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ARTIFACTS = join(ROOT, 'test-artifacts');
const chromiumFound = hasChromium('dashboard browser test');

/** A ceiling for the setup: a database stand-in, `wrangler dev` and Chromium on a machine that may be very busy. */
const SETUP_CEILING_MS = 360_000;

/** A ceiling for what the page shows by itself: a few of its 5 s refreshes on a loaded machine. */
const LIVE_CEILING_MS = 45_000;

describe.skipIf(!chromiumFound)('dashboard in Chromium', () => {
  let neon: NeonStandIn;
  let worker: Promise<WranglerDev> | undefined;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let tenant: CreatedProject;
  const temporary = mkdtempSync(join(tmpdir(), 'edge-tools-dashboard-'));
  const calls = { conflict: '', notFound: '', tooEnergetic: '', later: '' };

  const api = async (path: string, init: RequestInit = {}, key = tenant.apiKey) => {
    const response = await fetch(base + path, {
      ...init,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers },
    });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };
  const logMood = (timestamp: string, extra: Record<string, unknown> = {}, key?: string) =>
    api(
      '/tools/log-mood',
      { method: 'POST', body: JSON.stringify({ user_id: 'browser_user', mood: 'happy', energy_level: 6, timestamp, ...extra }) },
      key,
    );
  /** The call's row in the page's list. */
  const row = (traceId: string) => page.locator(`#calls button[data-trace-id="${traceId}"]`);

  beforeAll(async () => {
    neon = await startNeonStandIn();
    await migrateDatabase(neon.connectionString);
    tenant = await createProject(neon.connectionString, 'Browser tenant');
    const other = await createProject(neon.connectionString, 'Other tenant');
    // Kept as a promise, so that it is stopped even when this hook times out while it starts.
    worker = startWranglerDev({
      vars: { DATABASE_URL: neon.connectionString },
      persistTo: join(temporary, 'wrangler-state'),
      sandbox: false,
    });
    base = (await worker).url;

    // Known calls: 3 successes, a conflict (the same entry twice), a not-found, 2 validation refusals.
    for (const day of [1, 2, 3]) expect((await logMood(`2030-05-0${day}T08:00:00Z`)).status).toBe(200);
    const conflict = await logMood('2030-05-01T08:00:00Z');
    expect(conflict.body.error.code).toBe('CONFLICT');
    calls.conflict = conflict.body.meta.trace_id;
    const tooEnergetic = await logMood('2030-05-04T08:00:00Z', { energy_level: 15 });
    expect(tooEnergetic.status).toBe(400);
    calls.tooEnergetic = tooEnergetic.body.meta.trace_id;
    expect((await logMood('2030-05-04T08:00:00Z', { mood: 'excited' })).status).toBe(400);
    const notFound = await api('/tools/get-document-context', {
      method: 'POST',
      body: JSON.stringify({ task_ids: [crypto.randomUUID()] }),
    });
    expect(notFound.body.error.code).toBe('NOT_FOUND');
    calls.notFound = notFound.body.meta.trace_id;
    // Another tenant's call, which this tenant's page must not show.
    expect((await logMood('2030-05-01T08:00:00Z', {}, other.apiKey)).status).toBe(200);

    // Traces and refusals are written after each answer: wait until all are readable.
    await vi.waitFor(
      async () => {
        expect((await api('/metrics?window=1h')).body.data?.totals.calls).toBe(5);
        expect((await api('/refusals')).body.data?.refusals).toHaveLength(2);
      },
      { timeout: 15_000, interval: 200 },
    );

    mkdirSync(ARTIFACTS, { recursive: true });
    context = await launchChromium(join(temporary, 'profile'), { viewport: { width: 1440, height: 900 } });
    page = context.pages()[0] ?? (await context.newPage());
  }, SETUP_CEILING_MS);

  afterAll(async () => {
    await context?.close();
    (await worker?.catch(() => undefined))?.stop();
    await neon?.close();
    rmSync(temporary, { recursive: true, force: true });
  });

  /** A description list's terms and values, as shown. */
  const described = (selector: string) =>
    page
      .locator(selector)
      .evaluate((list) =>
        Object.fromEntries(
          Array.from(list.querySelectorAll('dt'), (term) => term).map((term) => [term.textContent, term.nextElementSibling!.textContent]),
        ),
      );

  it('shows the numbers of the calls made, for the key entered, and nothing of another tenant', async () => {
    await page.goto(`${base}/dashboard`);
    await page.getByLabel('API key').fill(tenant.apiKey);
    await page.getByRole('button', { name: 'Open' }).click();
    await row(calls.conflict).waitFor({ timeout: LIVE_CEILING_MS });
    await page.locator('#tools li[data-tool="log-mood"]').waitFor();

    expect(await page.getByLabel('Window').inputValue()).toBe('1h');
    const metrics = (await api('/metrics?window=1h')).body.data;
    const logMoodMetrics = metrics.tools.find((t: { tool: string }) => t.tool === 'log-mood');
    expect(await described('#tools li[data-tool="log-mood"] dl')).toEqual({
      Calls: '4',
      'Success rate': '75.0 %',
      'p50 / p95 / p99 ms': ['p50', 'p95', 'p99'].map((p) => logMoodMetrics.duration_ms[p].toFixed(1)).join(' / '),
      Errors: '1 (CONFLICT 1)',
      'Queue p95 ms': logMoodMetrics.queued_ms.p95.toFixed(1),
      Refused: '2',
    });
    expect(await described('#tools li[data-tool="get-document-context"] dl')).toMatchObject({
      Calls: '1',
      'Success rate': '0.0 %',
      Errors: '1 (NOT_FOUND 1)',
      Refused: '0',
    });
    expect((await page.locator('#tools h3').allInnerTexts()).sort()).toEqual(['get-document-context', 'log-mood']);
    expect(await described('#totals')).toMatchObject({
      Calls: '5',
      'Success rate': '60.0 %',
      Failures: '2',
      'Invalid input refused': '2',
      'Rate limited': '0',
    });

    // Every call of the window is listed: 5 executions and 2 refusals, this tenant's only.
    await expect.poll(() => page.locator('#calls button.call').count()).toBe(7);
    expect(await page.locator('#calls button[data-outcome="refused"]').count()).toBe(2);

    // Latency per tool on a log scale, with each value on hover; a sparkline per tool.
    const p95Marks = page.locator('#latency-chart circle.p95');
    expect(await p95Marks.count()).toBe(2);
    expect(await page.locator('#latency-chart g[data-tool="log-mood"] circle.p95 title').textContent()).toBe(
      `log-mood p95: ${logMoodMetrics.duration_ms.p95.toFixed(1)} ms`,
    );
    expect(await page.locator('#latency-chart').getAttribute('aria-label')).toMatch(/log scale/);
    expect(await page.locator('#tools li[data-tool="log-mood"] svg.sparkline').getAttribute('aria-label')).toMatch(
      /^log-mood: 4 calls, .* 1 failed$/,
    );

    // The key lives in this tab's sessionStorage only: no cookie, nothing in localStorage.
    expect(
      await page.evaluate(() => ({
        session: sessionStorage.getItem('edge-tools-api-key'),
        local: localStorage.length,
        cookie: document.cookie,
      })),
    ).toEqual({
      session: tenant.apiKey,
      local: 0,
      cookie: '',
    });
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard.png'), fullPage: true });
  });

  it('shows a call made after the page opened, without a click', async () => {
    expect(await page.getByRole('button', { name: 'Pause' }).getAttribute('aria-pressed')).toBe('false');
    const later = await logMood('2030-05-09T08:00:00Z', { energy_level: 7 });
    expect(later.status).toBe(200);
    calls.later = later.body.meta.trace_id;
    await row(calls.later).waitFor({ timeout: LIVE_CEILING_MS });
    expect(await row(calls.later).getAttribute('data-outcome')).toBe('success');
  });

  it("opens a success's whole trace from the keyboard: input, output, duration, queue wait, attempts", async () => {
    const execution = (await api(`/executions/${calls.later}`)).body.data;
    await row(calls.later).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await dialog.getByRole('heading', { level: 2 }).innerText()).toBe('Success of log-mood');
    expect(await described('#call-facts')).toMatchObject({
      'Trace id': calls.later,
      Outcome: 'success',
      'Duration ms': execution.duration_ms.toFixed(1),
      'Queue wait ms': execution.queued_ms.toFixed(1),
      Attempts: '1',
      Warnings: 'none',
    });
    expect(JSON.parse(await dialog.locator('#call-input pre').innerText())).toEqual(execution.input);
    expect(JSON.parse(await dialog.locator('#call-output pre').innerText())).toEqual(execution.output);
    expect(await dialog.locator('#call-input pre').innerText()).toContain('"energy_level": 7');
    expect(await dialog.locator('#call-error').isVisible()).toBe(false);
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-trace.png') });
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
  });

  it('opens a call that was answered with a warning, and shows the warning the caller was told', async () => {
    const form = {
      patient_name: 'Browser Patient',
      age: 40,
      weight_kg: 61.555,
      smoker: false,
      blood_type: 'A+',
      recorded_at: '2030-05-09T09:00:00Z',
    };
    const rounded = await api('/tools/submit-health-form', { method: 'POST', body: JSON.stringify(form) });
    expect(rounded.status).toBe(200);
    const [warning] = rounded.body.meta.warnings;
    expect(warning).toMatchObject({ code: 'rounded', field: 'weight_kg', received: 61.555, stored: 61.56 });
    const traceId = rounded.body.meta.trace_id;
    await row(traceId).waitFor({ timeout: LIVE_CEILING_MS });
    await row(traceId).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await dialog.getByRole('heading', { level: 2 }).innerText()).toBe('Success of submit-health-form');
    await expect.poll(async () => (await described('#call-facts'))['Trace id']).toBe(traceId);
    expect(await described('#call-facts')).toMatchObject({ Outcome: 'success', Warnings: `rounded: ${warning.message}` });
    expect(warning.message).toContain('61.555');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
  });

  it('filters by outcome and code, and a refused call lists its field problems', async () => {
    await page.getByLabel('Outcome').selectOption('refused');
    await expect.poll(() => page.locator('#calls button.call:not([data-outcome="refused"])').count(), { timeout: LIVE_CEILING_MS }).toBe(0);
    expect(await page.locator('#calls button.call').count()).toBe(2);
    await row(calls.tooEnergetic).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await dialog.getByRole('heading', { level: 2 }).innerText()).toBe('Refused call of log-mood');
    expect(await described('#call-facts')).toMatchObject({ 'Trace id': calls.tooEnergetic, Code: 'VALIDATION_ERROR' });
    const problems = await dialog.locator('#fields li').allInnerTexts();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^energy_level \w+: .*10/);
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'hidden' });

    await page.getByLabel('Outcome').selectOption('');
    await page.getByLabel('Code').selectOption('CONFLICT');
    await expect
      .poll(() => page.locator('#calls button.call').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-trace-id'))), {
        timeout: LIVE_CEILING_MS,
      })
      .toEqual([calls.conflict]);
    await page.getByLabel('Code').selectOption('');
    await row(calls.notFound).waitFor({ timeout: LIVE_CEILING_MS });
  });

  it('revokes a connected client from the page, after which its token is refused', async () => {
    const client = await connectClient(base, tenant.apiKey, 'Dashboard test agent');
    expect(await mcpStatus(base, client.accessToken)).toBe(200);
    const listed = page.locator('#clients tbody tr', { has: page.getByRole('rowheader', { name: 'Dashboard test agent' }) });
    await listed.waitFor({ timeout: LIVE_CEILING_MS });
    expect(await listed.locator('td').allInnerTexts()).toEqual(['study', 'read & write', expect.any(String), 'Revoke']);

    await listed.getByRole('button', { name: 'Revoke Dashboard test agent' }).click();
    await listed.waitFor({ state: 'detached', timeout: LIVE_CEILING_MS });
    expect(await page.locator('#clients-status').innerText()).toContain('Revoked Dashboard test agent');
    expect((await api('/grants')).body.data.grants).toEqual([]);
    // Grants are re-checked about every second: the token stops within seconds.
    await vi.waitFor(async () => expect(await mcpStatus(base, client.accessToken)).toBe(401), { timeout: 15_000, interval: 250 });
  });

  it('fits a 390 px screen: nothing lies beyond its edge, and the calls still open', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await row(calls.later).waitFor();
    const overflow = () =>
      page.evaluate(() => {
        const width = document.documentElement.clientWidth;
        const beyond = Array.from(document.querySelectorAll('header *, main *, dialog[open] *'))
          .filter((node) => node.getClientRects().length > 0 && node.getBoundingClientRect().right > width + 0.5)
          .map((node) => `${node.tagName.toLowerCase()}${node.id ? `#${node.id}` : ''}.${node.getAttribute('class') ?? ''}`);
        return { scrollWidth: document.documentElement.scrollWidth, clientWidth: width, beyond };
      });
    const shown = await overflow();
    expect(shown.beyond).toEqual([]);
    expect(shown.scrollWidth).toBeLessThanOrEqual(shown.clientWidth);
    expect(await page.getByRole('button', { name: 'Pause' }).isVisible()).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-phone.png'), fullPage: true });

    await row(calls.conflict).click();
    await page.getByRole('dialog').waitFor();
    await page.locator('#call-stack pre').waitFor();
    expect((await overflow()).beyond).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-phone-trace.png') });
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
  });

  it('pauses, and refuses a wrong key with a message, asking again', async () => {
    await page.getByRole('button', { name: 'Pause' }).click();
    expect(await page.getByRole('button', { name: 'Resume' }).getAttribute('aria-pressed')).toBe('true');
    await page.getByRole('button', { name: 'Forget key' }).click();
    await page.getByLabel('API key').fill('et_not-a-real-key');
    await page.getByRole('button', { name: 'Open' }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('The API key was refused');
    expect(await page.getByLabel('API key').isVisible()).toBe(true);
    expect(await page.evaluate(() => sessionStorage.getItem('edge-tools-api-key'))).toBeNull();
  });
});
