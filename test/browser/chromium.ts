/**
 * Chromium for the browser tests: where it is (CHROMIUM_PATH, else Debian's `chromium`), whether
 * it is there (a test without it is skipped, loudly), and a headless profile launched the same
 * way for every test.
 */
import { existsSync } from 'node:fs';
import { chromium, type BrowserContext } from 'playwright-core';

/** The Chromium binary the tests drive. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Whether Chromium is installed; when it is not, says on stderr that `test` is skipped and how to install it. */
export function hasChromium(test: string): boolean {
  if (existsSync(CHROMIUM)) return true;
  console.warn(
    `\n!!! Chromium not found at ${CHROMIUM}: the ${test} is SKIPPED. Install it (apt-get install chromium) or set CHROMIUM_PATH.\n`,
  );
  return false;
}

/**
 * A headless Chromium with its profile in `profileDir`, kept quiet (no background networking,
 * component updates, sync or first-run pages); `viewport` when given.
 */
export function launchChromium(
  profileDir: string,
  { viewport }: { viewport?: { width: number; height: number } } = {},
): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
    ...(viewport ? { viewport } : {}),
  });
}
