/** Types of the bindings the test setup gives the worker, and of the worker's main module. */
interface TestProject {
  projectId: string;
  apiKey: string;
}

declare namespace Cloudflare {
  interface Env {
    DATABASE_URL?: string;
    /** Two tenants created by the test setup. */
    TEST_PROJECTS: { tenantA: TestProject; tenantB: TestProject };
  }
  interface GlobalProps {
    mainModule: typeof import('../functions/gateway.ts');
  }
}
