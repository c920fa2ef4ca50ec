/**
 * The dashboard in a real browser: Debian's Chromium driven by playwright-core (no browser is
 * downloaded), against the real worker served by `wrangler dev` on 127.0.0.1 with the Neon
 * stand-in. The test makes known calls (successes, a conflict, a not-found, validation
 * refusals, and one call of another tenant), opens the page, enters the key, and reads the page
 * as a person would: the numbers shown must be those calls'. It opens a failure's trace, checks
 * a phone-sized screen, and saves screenshots in test-artifacts/ (git-ignored).
 *
 * Without Chromium (set CHROMIUM_PATH, or install Debian's `chromium`) it is skipped, loudly;
 * CI installs it.
 */
/// <reference lib="dom" />
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createProject, migrateDatabase, type CreatedProject } from '../../local/database.ts';
import { startNeonStandIn, type NeonStandIn } from '../../local/neon-http.ts';
import { startWranglerDev, type WranglerDev } from '../../local/wrangler-dev.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ARTIFACTS = join(ROOT, 'test-artifacts');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) {
  console.warn(`\n!!! Chromium not found at ${CHROMIUM}: the dashboard browser test is SKIPPED. Install it (apt-get install chromium) or set CHROMIUM_PATH.\n`);
}

describe.skipIf(!hasChromium)('dashboard in Chromium', () => {
  let neon: NeonStandIn;
  let worker: WranglerDev | undefined;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let tenant: CreatedProject;
  const temporary = mkdtempSync(join(tmpdir(), 'edge-tools-dashboard-'));
  const calls = { conflict: '', notFound: '' };

  const api = async (path: string, init: RequestInit = {}, key = tenant.apiKey) => {
    const response = await fetch(base + path, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers } });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };
  const logMood = (timestamp: string, extra: Record<string, unknown> = {}, key?: string) =>
    api('/tools/log-mood', { method: 'POST', body: JSON.stringify({ user_id: 'browser_user', mood: 'happy', energy_level: 6, timestamp, ...extra }) }, key);

  beforeAll(async () => {
    neon = await startNeonStandIn();
    await migrateDatabase(neon.connectionString);
    tenant = await createProject(neon.connectionString, 'Browser tenant');
    const other = await createProject(neon.connectionString, 'Other tenant');
    worker = await startWranglerDev({ vars: { DATABASE_URL: neon.connectionString }, persistTo: join(temporary, 'wrangler-state') });
    base = worker.url;

    // Known calls: 3 successes, a conflict (the same entry twice), a not-found, 2 validation refusals.
    for (const day of [1, 2, 3]) expect((await logMood(`2030-05-0${day}T08:00:00Z`)).status).toBe(200);
    const conflict = await logMood('2030-05-01T08:00:00Z');
    expect(conflict.body.error.code).toBe('CONFLICT');
    calls.conflict = conflict.body.meta.trace_id;
    expect((await logMood('2030-05-04T08:00:00Z', { energy_level: 15 })).status).toBe(400);
    expect((await logMood('2030-05-04T08:00:00Z', { mood: 'excited' })).status).toBe(400);
    const notFound = await api('/tools/get-document-context', { method: 'POST', body: JSON.stringify({ task_ids: [crypto.randomUUID()] }) });
    expect(notFound.body.error.code).toBe('NOT_FOUND');
    calls.notFound = notFound.body.meta.trace_id;
    // Another tenant's call, which this tenant's page must not show.
    expect((await logMood('2030-05-01T08:00:00Z', {}, other.apiKey)).status).toBe(200);

    // Traces are written after each answer: wait until all are readable.
    await vi.waitFor(async () => expect((await api('/metrics')).body.data?.totals.calls).toBe(5), { timeout: 15_000, interval: 200 });

    mkdirSync(ARTIFACTS, { recursive: true });
    context = await chromium.launchPersistentContext(join(temporary, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
      viewport: { width: 1280, height: 900 },
    });
    page = context.pages()[0] ?? (await context.newPage());
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    worker?.stop();
    await neon?.close();
    rmSync(temporary, { recursive: true, force: true });
  });

  /** The cells of the per-tool table's row for `tool`, by column header. */
  async function toolRow(tool: string): Promise<Record<string, string>> {
    const headers = await page.locator('#tools thead th').allInnerTexts();
    const cells = await page.locator('#tools tbody tr', { has: page.getByRole('rowheader', { name: tool, exact: true }) }).locator('th, td').allInnerTexts();
    return Object.fromEntries(headers.map((header, i) => [header.trim(), cells[i]?.trim() ?? '']));
  }

  it('shows the numbers of the calls made, for the key entered, and nothing of another tenant', async () => {
    await page.goto(`${base}/dashboard`);
    await expect.poll(() => page.getByLabel('API key').isVisible()).toBe(true);
    await page.getByLabel('API key').fill(tenant.apiKey);
    await page.getByRole('button', { name: 'Open' }).click();
    await page.getByRole('rowheader', { name: 'log-mood', exact: true }).waitFor({ timeout: 15_000 });

    const metrics = (await api('/metrics')).body.data;
    const logMoodMetrics = metrics.tools.find((t: { tool: string }) => t.tool === 'log-mood');
    expect(await toolRow('log-mood')).toEqual({
      Tool: 'log-mood',
      Calls: '4',
      'Success rate': '75.0 %',
      'p50 ms': logMoodMetrics.duration_ms.p50.toFixed(1),
      'p95 ms': logMoodMetrics.duration_ms.p95.toFixed(1),
      'p99 ms': logMoodMetrics.duration_ms.p99.toFixed(1),
      Errors: '1',
      'Error codes': 'CONFLICT 1',
      'Queue p95 ms': logMoodMetrics.queued_ms.p95.toFixed(1),
      Refused: '2',
    });
    expect(await toolRow('get-document-context')).toMatchObject({ Calls: '1', 'Success rate': '0.0 %', Errors: '1', 'Error codes': 'NOT_FOUND 1', Refused: '0' });
    const shownTools = await page.locator('#tools tbody th').allInnerTexts();
    expect(shownTools.sort()).toEqual(['get-document-context', 'log-mood']);

    const totals = Object.fromEntries(
      await page.locator('#totals > div').evaluateAll((cards) => cards.map((card) => [card.querySelector('dt')!.textContent, card.querySelector('dd')!.textContent])),
    );
    expect(totals).toMatchObject({ Calls: '5', 'Success rate': '60.0 %', Failures: '2', 'Invalid input refused': '2', 'Rate limited': '0' });

    // Both charts drew something: the latency line and the volume bars.
    expect(await page.locator('#latency-chart path.p95').count()).toBe(1);
    expect(await page.locator('#volume-chart rect.failures').count()).toBeGreaterThan(0);

    // The key lives in this tab's sessionStorage only: no cookie, nothing in localStorage.
    expect(await page.evaluate(() => ({ session: sessionStorage.getItem('edge-tools-api-key'), local: localStorage.length, cookie: document.cookie }))).toEqual({
      session: tenant.apiKey,
      local: 0,
      cookie: '',
    });
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard.png'), fullPage: true });
  });

  it("lists the recent failures and opens a failure's whole trace", async () => {
    const failures = page.locator('#failures tbody tr');
    expect(await failures.count()).toBe(2);
    const conflictRow = failures.filter({ hasText: 'CONFLICT' });
    await conflictRow.getByRole('button', { name: 'View trace' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await dialog.getByRole('heading', { level: 2 }).innerText()).toBe('Trace of log-mood');
    const facts = Object.fromEntries(
      await dialog.locator('dl dt').evaluateAll((terms) => terms.map((term) => [term.textContent, term.nextElementSibling!.textContent])),
    );
    expect(facts).toMatchObject({ 'Trace id': calls.conflict, Tool: 'log-mood', Status: 'failure', 'Error code': 'CONFLICT', Attempts: '1' });
    expect(facts['OpenTelemetry trace']).toBe(calls.conflict.replace(/-/g, ''));
    expect(await dialog.locator('#trace-error').innerText()).toContain('"code": "CONFLICT"');
    expect(await dialog.locator('#trace-stack').innerText()).toContain('duplicate key');
    expect(await dialog.locator('#trace-input').innerText()).toContain('"user_id": "browser_user"');
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-trace.png') });
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
  });

  it('fits a phone-sized screen: nothing but the tables scrolls sideways', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.getByRole('rowheader', { name: 'log-mood', exact: true }).waitFor();
    const widths = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, viewport: window.innerWidth }));
    expect(widths.page).toBeLessThanOrEqual(widths.viewport);
    expect(await page.getByRole('button', { name: 'Refresh' }).isVisible()).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-phone.png'), fullPage: true });
  });

  it('refuses a wrong key with a message, and asks again', async () => {
    await page.getByRole('button', { name: 'Forget key' }).click();
    await page.getByLabel('API key').fill('et_not-a-real-key');
    await page.getByRole('button', { name: 'Open' }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('The API key was refused');
    expect(await page.getByLabel('API key').isVisible()).toBe(true);
    expect(await page.evaluate(() => sessionStorage.getItem('edge-tools-api-key'))).toBeNull();
  });
});
