import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig, type Plugin } from 'vitest/config';
import { wasmModuleSource } from './local/wasm.ts';
import { localV8Flags } from './local/wrangler-env.ts';
import TimeLimitReporter from './test/reporters/time-limits.ts';

// The workerd of the workers projects runs with the V8 flags of every local workerd (local/wrangler-env.ts):
// Miniflare reads them from here when the plugin starts it.
process.env.MINIFLARE_WORKERD_V8_FLAGS = localV8Flags();

/** `import kernel from './x.wasm'` gives the compiled module in Node, as wrangler's bundle does in workerd. */
const wasmModules: Plugin = {
  name: 'wasm-modules',
  enforce: 'pre',
  load: (id) => (id.endsWith('.wasm') ? wasmModuleSource(id) : undefined),
};

/**
 * Vite reads the source maps of what it transforms and warns once per file whose map names sources
 * the package does not ship (@modelcontextprotocol/sdk's maps point at its unpublished src/). Those
 * stack frames stay on the built files; the warning says nothing about this project, so it is dropped
 * for files under node_modules, and every other warning passes.
 */
const quietPackageSourcemaps: Plugin = {
  name: 'quiet-package-sourcemaps',
  configResolved({ logger }) {
    const warnOnce = logger.warnOnce.bind(logger);
    logger.warnOnce = (message, options) => {
      if (/^Sourcemap for ".*\/node_modules\/.*" points to missing source files$/.test(message)) return;
      warnOnce(message, options);
    };
  },
};

/** Cases that take minutes or load the machine on purpose live in `*.stress.test.ts` files: the stress lane. */
const STRESS = '**/*.stress.test.ts';
/** Node-side cases that build or serve the deployable bundles live in `*.e2e.test.ts` files: the e2e lane. */
const E2E = '**/*.e2e.test.ts';

/**
 * The real worker inside workerd, against the local stand-ins started by the global setup. With
 * `isolate: false` a test worker imports the worker's modules once and runs file after file in that
 * isolate, as a deployed isolate serves request after request; each file starting a fresh isolate
 * cost about four seconds of imports.
 */
function workersProject(name: string, include: string[], exclude: string[] = [], { isolate = true } = {}) {
  return {
    plugins: [
      quietPackageSourcemaps,
      cloudflareTest(({ inject }) => {
        const services = inject('services');
        return {
          wrangler: { configPath: './wrangler.toml' },
          // workerd's informational log, which reports every refused or unresolvable outbound connection
          // as an "uncaught exception" with a native stack, even when the worker catches the fetch's
          // rejection (the readiness, fallback and exporter cases point at closed ports on purpose).
          // A rejection nobody handles still fails the run: Vitest reports it, and a rejected waitUntil
          // fails its test.
          verbose: false,
          miniflare: {
            // The gateway's SANDBOX service binding (wrangler.toml) goes to the sandbox host, as it goes to the sandbox worker when deployed.
            serviceBindings: { SANDBOX: { external: { address: new URL(services.sandboxUrl).host, http: {} } } },
            bindings: {
              DATABASE_URL: inject('databaseUrl'),
              // Empty when redis-server is missing: the worker then uses its in-process semaphore.
              UPSTASH_REDIS_REST_URL: services.redisUrl,
              UPSTASH_REDIS_REST_TOKEN: services.redisToken,
              // Every file registers OAuth clients from this one machine, far more than the 20 an hour
              // a deployment allows an address; auth-attacks-hygiene checks that default bound itself.
              OAUTH_REGISTRATIONS_PER_HOUR: '100000',
              TEST_PROJECTS: inject('projects'),
              TEST_SERVICES: services,
            },
          },
        };
      }),
    ],
    test: {
      name,
      include,
      exclude,
      globalSetup: ['test/setup/global-setup.ts'],
      isolate,
      // Ceilings for a hung test, not measures: a call through workerd and the stand-ins can take
      // seconds when another process keeps both cores busy.
      hookTimeout: 60_000,
      testTimeout: 30_000,
    },
  };
}

/** Pure logic and the local stand-ins, in Node. */
function nodeProject(name: string, include: string[], exclude: string[] = []) {
  return {
    plugins: [wasmModules],
    // The OAuth provider library and @cloudflare/codemode import `cloudflare:workers`, which only workerd has.
    resolve: { alias: { 'cloudflare:workers': new URL('./test/support/cloudflare-workers.ts', import.meta.url).pathname } },
    test: {
      name,
      server: { deps: { inline: ['@cloudflare/workers-oauth-provider', '@cloudflare/codemode'] } },
      environment: 'node',
      include,
      exclude,
      // Suites start real servers (PGlite takes several seconds on a loaded machine).
      hookTimeout: 60_000,
      testTimeout: 30_000,
    },
  };
}

/**
 * The lanes (package.json): `npm test` runs unit, workers and docs (the fast lanes), `npm run test:stress`
 * stress-node and stress-workers, `npm run test:e2e` bundles, browser, served, frameworks and docs-examples.
 */
export default defineConfig({
  test: {
    // What a passing test logged is not printed; a failing test shows its own logs.
    silent: 'passed-only',
    // A failure that was a time limit says so, with the load average (test/reporters/time-limits.ts).
    reporters: ['default', new TimeLimitReporter()],
    projects: [
      nodeProject('unit', ['test/unit/**/*.test.ts', 'test/local/**/*.test.ts'], [STRESS, E2E]),
      workersProject('workers', ['test/integration/**/*.test.ts'], [STRESS], { isolate: false }),
      nodeProject('stress-node', [`test/local/${STRESS}`]),
      nodeProject('bundles', [`test/local/${E2E}`]),
      workersProject('stress-workers', [`test/integration/${STRESS}`]),
      {
        // The dashboard in Debian's Chromium, against the worker under `wrangler dev` (Node drives both).
        test: {
          name: 'browser',
          environment: 'node',
          include: ['test/browser/**/*.test.ts'],
          hookTimeout: 120_000,
          testTimeout: 60_000,
        },
      },
      {
        // Debian's Prometheus scraping the worker under `wrangler dev` (Node drives both).
        test: {
          name: 'served',
          environment: 'node',
          include: ['test/served/**/*.test.ts'],
          hookTimeout: 120_000,
          testTimeout: 60_000,
        },
      },
      {
        // The agent frameworks' own MCP clients and tool paths (examples/), against one `wrangler dev` for the project.
        test: {
          name: 'frameworks',
          environment: 'node',
          include: ['test/frameworks/**/*.test.ts'],
          globalSetup: ['test/frameworks/gateway.ts'],
          hookTimeout: 180_000,
          testTimeout: 60_000,
        },
      },
      {
        // The docs: every relative link resolves, the reference tables against the code (the registry, whose
        // clustering tool imports a .wasm module), and the judge of their JSON examples (fast, no stack).
        plugins: [wasmModules],
        test: { name: 'docs', environment: 'node', include: ['test/docs/*.test.ts'] },
      },
      {
        // The docs' shell and JSON examples, run against `wrangler dev` over the stand-ins (a served stack).
        test: {
          name: 'docs-examples',
          environment: 'node',
          include: ['test/docs/examples/**/*.test.ts'],
          globalSetup: ['test/docs/examples/stack.ts'],
          hookTimeout: 180_000,
          testTimeout: 60_000,
        },
      },
    ],
  },
});
