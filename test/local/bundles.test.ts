/**
 * What a tool's own worker carries, read from the dry-run deploy a user runs and its esbuild
 * metafile: a regression to `import { z } from 'zod'` (every locale), a tool worker that mounts MCP,
 * or a validator the gateway alone needs would each show here first. Sizes are not timing: the
 * gzip budget of a tool worker and of the gateway is asserted as wrangler reports it.
 */
import { describe, expect, it } from 'vitest';
import { measureBundles, TARGETS } from '../../bench/bundles.ts';

/** Packages no tool's own worker bundles: zod's other locales, MCP, a JSON Schema validator, OAuth (the gateway's). */
const NEVER_IN_A_TOOL_WORKER = ['zod (other locales)', '@modelcontextprotocol/server', '@modelcontextprotocol/sdk', 'ajv', '@cloudflare/workers-oauth-provider'];

/** A ceiling for one dry-run bundle, generous: on a loaded machine one takes tens of seconds. */
const BUNDLE_TIMEOUT_MS = 180_000;

/** The agent frameworks of examples/ and test/frameworks/: devDependencies that no worker bundles. */
const AGENT_FRAMEWORK = /^(?:ai|openai|@ai-sdk\/.+|@openai\/.+|@langchain\/.+|@mastra\/.+)$/;

describe('a tool worker bundle', () => {
  // log-mood: a table tool with no provider; cluster-by-similarity: the WebAssembly kernel and the embedder.
  for (const worker of ['log-mood', 'cluster-by-similarity']) {
    it(`${worker}: within ${TARGETS.toolWorkerGzipKib} KiB gzip, without what only the gateway serves`, async () => {
      const [bundle] = await measureBundles(undefined, [worker]);
      expect(bundle!.worker).toBe(worker);
      expect(bundle!.gzipKib).toBeLessThanOrEqual(TARGETS.toolWorkerGzipKib);
      const packages = [...bundle!.byPackage.keys()];
      expect(packages.filter((name) => NEVER_IN_A_TOOL_WORKER.includes(name) || AGENT_FRAMEWORK.test(name))).toEqual([]);
      // What it must carry: its own code, the validation layer, and Neon's own driver under drizzle.
      expect(packages).toEqual(expect.arrayContaining(['zod', 'shared/core', 'drizzle-orm', '@neondatabase/serverless']));
    }, BUNDLE_TIMEOUT_MS);
  }
});

describe('the gateway bundle', () => {
  it(`within ${TARGETS.gatewayGzipKib} KiB gzip: MCP and Neon's driver, none of the agent frameworks`, async () => {
    const [bundle] = await measureBundles(undefined, ['gateway']);
    expect(bundle!.worker).toBe('gateway');
    expect(bundle!.gzipKib).toBeLessThanOrEqual(TARGETS.gatewayGzipKib);
    const packages = [...bundle!.byPackage.keys()];
    expect(packages.filter((name) => AGENT_FRAMEWORK.test(name))).toEqual([]);
    expect(packages).toEqual(expect.arrayContaining(['@modelcontextprotocol/server', 'hono', '@neondatabase/serverless']));
  }, BUNDLE_TIMEOUT_MS);
});
