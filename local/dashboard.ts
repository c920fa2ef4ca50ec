/**
 * `npm run build:dashboard`: bundles the dashboard's browser code (shared/http/dashboard/browser/,
 * typed against the DOM by tsconfig.dashboard.json) with esbuild, the bundler wrangler itself
 * uses, into shared/http/dashboard/script.ts, which the page inlines. The result is committed, so
 * deploys, `npm run dev` and tests need no build step; a unit test checks that it is exactly what
 * this build gives. Run this after editing the browser code.
 */
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The browser code's entry point. */
export const DASHBOARD_ENTRY = fileURLToPath(new URL('../shared/http/dashboard/browser/client.ts', import.meta.url));

/** The module the build writes, which the page imports. */
export const DASHBOARD_SCRIPT_MODULE = fileURLToPath(new URL('../shared/http/dashboard/script.ts', import.meta.url));

/** The browsers the dashboard supports: those with `<dialog>` and ES2022. */
const TARGET = ['chrome111', 'firefox111', 'safari16.4'];

/** The source of script.ts: the bundled browser code as a string constant, and how it was made. */
export async function dashboardScriptModule(): Promise<string> {
  const result = await build({
    entryPoints: [DASHBOARD_ENTRY],
    bundle: true,
    format: 'iife',
    target: TARGET,
    minify: true,
    legalComments: 'none',
    charset: 'utf8',
    write: false,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]!.text.trim();
  if (/<\/script/i.test(code)) throw new Error('The dashboard bundle contains "</script", which would end the inline script early.');
  return `// Built by \`npm run build:dashboard\` from ./browser/ (esbuild, minified): do not edit.
// test/unit/dashboard-script.test.ts checks that it is exactly what the build gives.

/** The dashboard's browser code, as the page inlines it. */
export const DASHBOARD_SCRIPT = ${JSON.stringify(code)};
`;
}

if (import.meta.main) {
  const source = await dashboardScriptModule();
  writeFileSync(DASHBOARD_SCRIPT_MODULE, source);
  console.log(`${relative(ROOT, DASHBOARD_SCRIPT_MODULE)}: ${source.length} bytes`);
}
