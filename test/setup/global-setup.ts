/**
 * Starts the local stand-ins for the workers under test: the Neon stand-in (in memory, migrated,
 * with two tenants, each with the study planner's demo data), a fault-injecting proxy in front of
 * it, when redis-server is installed a real Redis behind the Upstash REST stand-in, an OTLP
 * receiver that records the spans it gets, and code mode's sandbox host (local/sandbox-host.ts),
 * which the gateway reaches through its SANDBOX service binding. Hands their URLs and keys to the workers.
 * With LOCAL_NEON_RTT_MS / LOCAL_UPSTASH_RTT_MS set, every request to the stand-ins costs that
 * round trip (local/round-trip.ts), the setup's own included.
 */
import type { TestProject } from 'vitest/node';
import { createProject, migrateDatabase, type CreatedProject } from '../../local/database.ts';
import { describeRoundTrips, injectedRoundTrips, NO_ROUND_TRIP } from '../../local/round-trip.ts';
import { startFaultProxy } from '../../local/fault-proxy.ts';
import { startSandboxHost } from '../../local/sandbox-host.ts';
import { seedStudy } from '../../local/study-seed.ts';
import { startCpuHogControl } from './cpu-hog.ts';
import { startOtlpReceiver } from './otlp-receiver.ts';
import { startFaultyRedis } from './redis-faults.ts';
import { startServiceProcess } from './service-process.ts';

// Types, not interfaces: miniflare bindings accept only JSON-shaped types.
export type TestProjects = {
  tenantA: CreatedProject;
  tenantB: CreatedProject;
  /** For suites that add documents and rows in bulk, so that tenant A's exact answers (search over every task) stay its own suites'. */
  tenantC: CreatedProject;
};

export type TestServices = {
  /** The Neon stand-in behind a fault proxy: `POST {faultControlUrl}` scripts the next failures. */
  faultyDatabaseUrl: string;
  faultControlUrl: string;
  /** Empty when redis-server is not installed (the suites that need it are skipped, loudly). */
  redisUrl: string;
  redisToken: string;
  /** The OTLP receiver: export to it, read what it got with `GET {otlpUrl}/__received`. */
  otlpUrl: string;
  /**
   * A second Redis (behind its own stand-in) that tests freeze and kill through
   * `POST {redisControlUrl} {"action": ...}` (test/setup/redis-faults.ts); empty without redis-server.
   */
  faultyRedisUrl: string;
  faultyRedisToken: string;
  redisControlUrl: string;
  /** Starts and stops a CPU hog: `POST {cpuHogControlUrl} {"action": "start" | "stop"}` (test/setup/cpu-hog.ts). */
  cpuHogControlUrl: string;
  /** Counts o200k_base tokens in Node: `POST {tokenCounterUrl}` with the text (test/setup/token-counter.ts). */
  tokenCounterUrl: string;
  /** Code mode's sandbox host (local/sandbox-host.ts): the workers' SANDBOX binding points at it; `GET {sandboxUrl}/health` lists its processes. */
  sandboxUrl: string;
};

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    projects: TestProjects;
    services: TestServices;
  }
}

export default async function setup(project: TestProject) {
  // Read here first, so that a wrong value stops the run naming the variable, and a deliberate one is said.
  const roundTrips = injectedRoundTrips();
  if (
    Object.values(roundTrips).some((roundTrip) => roundTrip.rttMs !== NO_ROUND_TRIP.rttMs || roundTrip.jitterMs !== NO_ROUND_TRIP.jitterMs)
  )
    console.warn(`\nInjected round trips to the stand-ins: ${describeRoundTrips(roundTrips)}.\n`);
  // The Neon and Upstash stand-ins and the token counter each answer from a process of their own
  // (test/setup/service-process.ts), never from Vitest's busy event loop.
  // The sandbox host runs each execution in a workerd process of its own, so that code that ends
  // its sandbox (out of memory, a loop no guard reaches) never touches the workers under test.
  const [neonProcess, upstashProcess, tokenProcess, sandboxHost] = await Promise.all([
    startServiceProcess('neon'),
    startServiceProcess('upstash'),
    startServiceProcess('tokens'),
    startSandboxHost(),
  ]);
  const neon = neonProcess.info;
  const upstash = upstashProcess.info;
  await migrateDatabase(neon.connectionString);
  const tenants = {
    tenantA: await createProject(neon.connectionString, 'Tenant A'),
    tenantB: await createProject(neon.connectionString, 'Tenant B'),
  };
  // Both tenants get the study planner's demo data, with the same ids: the study tools' examples name them.
  for (const tenant of Object.values(tenants)) await seedStudy(neon.connectionString, tenant.projectId);
  const projects: TestProjects = { ...tenants, tenantC: await createProject(neon.connectionString, 'Tenant C') };
  const proxy = await startFaultProxy(`http://127.0.0.1:${neon.port}`);
  const otlp = await startOtlpReceiver();
  const faultyRedis = upstash ? await startFaultyRedis('faulty-test-token') : null;
  const cpuHog = await startCpuHogControl();
  if (!upstash) {
    console.warn(
      '\n!!! redis-server is not installed: the Redis semaphore and rate-limit suites are SKIPPED. Install it (apt-get install redis-server).\n',
    );
  }

  project.provide('databaseUrl', neon.connectionString);
  project.provide('projects', projects);
  project.provide('services', {
    faultyDatabaseUrl: `postgres://edge:edge@127.0.0.1:${proxy.port}/edge`,
    faultControlUrl: `${proxy.url}/__faults`,
    redisUrl: upstash?.url ?? '',
    redisToken: upstash?.token ?? '',
    otlpUrl: otlp.url,
    faultyRedisUrl: faultyRedis?.url ?? '',
    faultyRedisToken: faultyRedis?.token ?? '',
    redisControlUrl: faultyRedis?.controlUrl ?? '',
    cpuHogControlUrl: cpuHog.controlUrl,
    tokenCounterUrl: tokenProcess.info.url,
    sandboxUrl: sandboxHost.url,
  });
  return async () => {
    await cpuHog.close();
    await faultyRedis?.close();
    await otlp.close();
    await proxy.close();
    sandboxHost.stop();
    await Promise.all([tokenProcess.stop(), upstashProcess.stop(), neonProcess.stop()]);
  };
}
