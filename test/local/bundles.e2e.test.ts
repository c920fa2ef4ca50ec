/**
 * What a tool's own worker carries, read from the dry-run deploy a user runs and its esbuild
 * metafile: a regression to `import { z } from 'zod'` (every locale), a tool worker that mounts MCP,
 * or a validator the gateway alone needs would each show here first. Sizes are not timing: the
 * gzip budget of a tool worker and of the gateway is asserted as wrangler reports it. The gateway's
 * bundle is also run in workerd, to its first MCP answer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { measureBundles, TARGETS } from '../../bench/bundles.ts';
import { coldStart, writeConfig } from '../../bench/cold-start.ts';
import { createProject, migrateDatabase } from '../../local/database.ts';
import { startNeonStandIn } from '../../local/neon-http.ts';

/** Packages no tool's own worker bundles: zod's other locales, MCP, a JSON Schema validator, OAuth (the gateway's). */
const NEVER_IN_A_TOOL_WORKER = [
  'zod (other locales)',
  '@modelcontextprotocol/server',
  '@modelcontextprotocol/sdk',
  'ajv',
  '@cloudflare/workers-oauth-provider',
];

/** A ceiling for one dry-run bundle, generous: on a loaded machine one takes tens of seconds. */
const BUNDLE_TIMEOUT_MS = 180_000;

/** The agent frameworks of examples/ and test/frameworks/: devDependencies that no worker bundles. */
const AGENT_FRAMEWORK = /^(?:ai|openai|@ai-sdk\/.+|@openai\/.+|@langchain\/.+|@mastra\/.+)$/;

describe('a tool worker bundle', () => {
  // log-mood: a table tool with no provider; cluster-by-similarity: the WebAssembly kernel and the embedder.
  for (const worker of ['log-mood', 'cluster-by-similarity']) {
    it(
      `${worker}: within ${TARGETS.toolWorkerGzipKib} KiB gzip, without what only the gateway serves`,
      async () => {
        const [bundle] = await measureBundles(undefined, [worker]);
        expect(bundle!.worker).toBe(worker);
        expect(bundle!.gzipKib).toBeLessThanOrEqual(TARGETS.toolWorkerGzipKib);
        const packages = [...bundle!.byPackage.keys()];
        expect(packages.filter((name) => NEVER_IN_A_TOOL_WORKER.includes(name) || AGENT_FRAMEWORK.test(name))).toEqual([]);
        // What it must carry: its own code, the validation layer, and Neon's own driver under drizzle.
        expect(packages).toEqual(expect.arrayContaining(['zod', 'shared/core', 'drizzle-orm', '@neondatabase/serverless']));
      },
      BUNDLE_TIMEOUT_MS,
    );
  }
});

describe('the gateway bundle', () => {
  it(
    `within ${TARGETS.gatewayGzipKib} KiB gzip: MCP and Neon's driver, none of the agent frameworks`,
    async () => {
      const [bundle] = await measureBundles(undefined, ['gateway']);
      expect(bundle!.worker).toBe('gateway');
      expect(bundle!.gzipKib).toBeLessThanOrEqual(TARGETS.gatewayGzipKib);
      const packages = [...bundle!.byPackage.keys()];
      expect(packages.filter((name) => AGENT_FRAMEWORK.test(name))).toEqual([]);
      expect(packages).toEqual(expect.arrayContaining(['@modelcontextprotocol/server', 'hono', '@neondatabase/serverless']));
    },
    BUNDLE_TIMEOUT_MS,
  );
});

describe('the gateway bundle in workerd', () => {
  // The bundle loads its MCP server on the first MCP request, from modules esbuild initialises
  // lazily: only the bundle itself shows whether every module they share with the rest is
  // initialised (the workers project runs the source, not the bundle).
  it(
    'loads, and answers its first MCP request through the official SDK',
    async () => {
      const neon = await startNeonStandIn();
      const scratch = mkdtempSync(join(tmpdir(), 'edge-tools-bundle-'));
      try {
        await migrateDatabase(neon.connectionString);
        const { apiKey } = await createProject(neon.connectionString, 'Bundle');
        const [bundle] = await measureBundles(undefined, ['gateway']);
        const config = writeConfig(scratch, 'gateway', bundle!.script, { DATABASE_URL: neon.connectionString });
        let answer: unknown;
        await coldStart(config, async (origin, signal) => {
          const response = await fetch(`${origin}/mcp`, {
            method: 'POST',
            signal,
            headers: {
              authorization: `Bearer ${apiKey}`,
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
            },
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 7,
              method: 'initialize',
              params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bundle-test', version: '1.0.0' } },
            }),
          });
          answer = await response.clone().json();
          return response;
        });
        expect(answer).toMatchObject({
          jsonrpc: '2.0',
          id: 7,
          result: { protocolVersion: '2025-11-25', serverInfo: { name: 'edge-tools' }, capabilities: { tools: {} } },
        });
      } finally {
        await neon.close();
        rmSync(scratch, { recursive: true, force: true });
      }
    },
    BUNDLE_TIMEOUT_MS,
  );
});
