/**
 * The stack the docs' examples run against, built as `npm run dev` builds it, in a folder of its
 * own: the Neon stand-in with the same demo project (50 sample plans with 1,000 tasks, the study
 * planner's demo data), so that the examples show what a reader of the docs gets; redis-server
 * behind the Upstash REST stand-in; and `wrangler dev` serving the gateway. The examples get what
 * a reader sets after `npm run dev`: BASE and KEY.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDemoData } from '../../../local/demo-data.ts';
import { startRedisServer } from '../../../local/redis-server.ts';
import { startUpstashStandIn } from '../../../local/upstash-rest.ts';
import { startWranglerDev, type WranglerDev, type WranglerDevOptions } from '../../../local/wrangler-dev.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** What the examples' shell gets: BASE, KEY, DATABASE_URL. */
    docsStack: { base: string; key: string; databaseUrl: string };
  }
}

export default async function setup(project: TestProject) {
  const root = mkdtempSync(join(tmpdir(), 'edge-tools-docs-'));
  const cleanups: (() => unknown)[] = [() => rmSync(root, { recursive: true, force: true })];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step();
  };
  try {
    const { neon, demo } = await openDemoData({ root });
    cleanups.push(() => neon.close());
    const redis = await startRedisServer();
    if (!redis)
      throw new Error(
        'The docs examples need redis-server (apt-get install redis-server): /health/ready and the rate limit are shown with it.',
      );
    cleanups.push(() => redis.stop());
    const upstash = await startUpstashStandIn({ redisPort: redis.port, token: crypto.randomUUID() });
    cleanups.push(() => upstash.close());
    const worker = await startGateway({
      vars: { DATABASE_URL: neon.connectionString, UPSTASH_REDIS_REST_URL: upstash.url, UPSTASH_REDIS_REST_TOKEN: upstash.token },
      persistTo: join(root, 'wrangler'),
    });
    cleanups.push(() => worker.stop());
    project.provide('docsStack', { base: worker.url, key: demo.apiKey, databaseUrl: neon.connectionString });
    return cleanup;
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/**
 * `wrangler dev` on a free port. The ports it and workerd take are free when asked for, but other
 * servers of this machine may take one before workerd binds it ("Address already in use"): then
 * it is started again, on other ports, a few times.
 */
async function startGateway(options: WranglerDevOptions): Promise<WranglerDev> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startWranglerDev(options);
    } catch (error) {
      if (attempt === 3 || !String(error).includes('Address already in use')) throw error;
    }
  }
}
