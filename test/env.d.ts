/** Types of the bindings the test setup gives the worker, and of the worker's main module. */
interface TestProject {
  projectId: string;
  apiKey: string;
}

declare namespace Cloudflare {
  interface Env {
    DATABASE_URL?: string;
    /** The OAuth provider's namespace (wrangler.toml). */
    OAUTH_KV: KVNamespace;
    /** Tenants created by the test setup (test/setup/global-setup.ts). */
    TEST_PROJECTS: { tenantA: TestProject; tenantB: TestProject; tenantC: TestProject };
    UPSTASH_REDIS_REST_URL?: string;
    UPSTASH_REDIS_REST_TOKEN?: string;
    /** The fault proxy and Redis stand-in of the test setup (test/setup/global-setup.ts). */
    TEST_SERVICES: {
      faultyDatabaseUrl: string;
      faultControlUrl: string;
      redisUrl: string;
      redisToken: string;
      faultyRedisUrl: string;
      faultyRedisToken: string;
      redisControlUrl: string;
      otlpUrl: string;
      cpuHogControlUrl: string;
      tokenCounterUrl: string;
    };
  }
  interface GlobalProps {
    mainModule: typeof import('../functions/gateway.ts');
  }
}
