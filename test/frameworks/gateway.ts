/**
 * The gateway the framework tests connect to, as a user runs it: `wrangler dev` on 127.0.0.1 with
 * the Neon stand-in (migrated, one project with the study planner's demo data). Started once for
 * the project's files; each file works in its own conversation (session id), so the files do not
 * see each other's writes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { createProject, migrateDatabase } from '../../local/database.ts';
import { startNeonStandIn } from '../../local/neon-http.ts';
import { seedStudy } from '../../local/study-seed.ts';
import { startWranglerDev } from '../../local/wrangler-dev.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The gateway's origin, `http://127.0.0.1:<port>`. */
    gatewayUrl: string;
    /** An API key of the project the frameworks work in. */
    gatewayKey: string;
  }
}

export default async function setup(project: TestProject) {
  const neon = await startNeonStandIn();
  const state = mkdtempSync(join(tmpdir(), 'edge-tools-frameworks-'));
  try {
    await migrateDatabase(neon.connectionString);
    const tenant = await createProject(neon.connectionString, 'Frameworks');
    await seedStudy(neon.connectionString, tenant.projectId);
    const worker = await startWranglerDev({ vars: { DATABASE_URL: neon.connectionString }, persistTo: join(state, 'wrangler-state') });
    project.provide('gatewayUrl', worker.url);
    project.provide('gatewayKey', tenant.apiKey);
    return async () => {
      worker.stop();
      await neon.close();
      rmSync(state, { recursive: true, force: true });
    };
  } catch (error) {
    await neon.close();
    rmSync(state, { recursive: true, force: true });
    throw error;
  }
}
