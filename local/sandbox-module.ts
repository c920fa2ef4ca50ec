/**
 * `npm run build:sandbox`: bundles code mode's execution module (shared/codemode/sandbox/, typed
 * TypeScript, linted and tested like the rest) with esbuild into shared/codemode/sandbox/module.ts,
 * the string the sandbox worker hands the Worker Loader for each execution. `cloudflare:workers`
 * and the agent's module (`./agent.js`, written per execution) stay imports. The result is
 * committed, so deploys, `npm run dev` and tests need no build step; a unit test checks that it is
 * exactly what this build gives. Run this after editing the execution module.
 */
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The execution module's entry point. */
export const SANDBOX_ENTRY = fileURLToPath(new URL('../shared/codemode/sandbox/execution.ts', import.meta.url));

/** The module the build writes, which the sandbox worker imports. */
export const SANDBOX_MODULE = fileURLToPath(new URL('../shared/codemode/sandbox/module.ts', import.meta.url));

/** The source of module.ts: the bundled execution module as a string constant, and how it was made. */
export async function sandboxModuleSource(): Promise<string> {
  const result = await build({
    entryPoints: [SANDBOX_ENTRY],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2024',
    minify: true,
    legalComments: 'none',
    charset: 'utf8',
    write: false,
    logLevel: 'silent',
    plugins: [
      {
        name: 'sandbox-imports',
        setup(bundle) {
          bundle.onResolve({ filter: /^(cloudflare:workers|\.\/agent\.js)$/ }, ({ path }) => ({ path, external: true }));
        },
      },
    ],
  });
  const code = result.outputFiles[0]!.text.trim();
  return `// Built by \`npm run build:sandbox\` from ./execution.ts (esbuild, minified): do not edit.
// test/unit/sandbox-module.test.ts checks that it is exactly what the build gives.

/** The execution module, as the sandbox worker hands it to the Worker Loader (\`execution.js\`). */
export const EXECUTION_MODULE = ${JSON.stringify(code)};
`;
}

if (import.meta.main) {
  const source = await sandboxModuleSource();
  writeFileSync(SANDBOX_MODULE, source);
  console.log(`${relative(ROOT, SANDBOX_MODULE)}: ${source.length} bytes`);
}
