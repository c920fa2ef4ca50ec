/**
 * Starts the local Neon stand-in (in memory), applies the migrations and creates two tenants,
 * then hands their connection string and API keys to the workers running the tests.
 */
import type { TestProject } from 'vitest/node';
import { createProject, migrateDatabase, type CreatedProject } from '../../local/database.ts';
import { startNeonStandIn } from '../../local/neon-http.ts';

// A type, not an interface: miniflare bindings accept only JSON-shaped types.
export type TestProjects = {
  tenantA: CreatedProject;
  tenantB: CreatedProject;
};

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    projects: TestProjects;
  }
}

export default async function setup(project: TestProject) {
  const neon = await startNeonStandIn();
  await migrateDatabase(neon.connectionString);
  const projects: TestProjects = {
    tenantA: await createProject(neon.connectionString, 'Tenant A'),
    tenantB: await createProject(neon.connectionString, 'Tenant B'),
  };
  project.provide('databaseUrl', neon.connectionString);
  project.provide('projects', projects);
  return () => neon.close();
}
