/**
 * What the concurrency suites share (concurrency.test.ts, and concurrency.stress.test.ts for the
 * many-caller case): the tests' Redis, a fresh semaphore namespace per test, and one call through a
 * gateway that serves a given tool.
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { Redis } from '@upstash/redis';
import { createGateway } from '../../shared/http/app.ts';
import type { AnyTool } from '../../shared/core/tool.ts';
import type { Env } from '../../shared/runtime/env.ts';
import type { ServeOptions } from '../../shared/http/tool-route.ts';
import { tenantA } from './helpers.ts';

export const services = env.TEST_SERVICES;
/** Whether a real Redis (redis-server behind the Upstash stand-in) is there; the suites that need it are skipped without. */
export const hasRedis = services.redisUrl !== '';
if (!hasRedis) console.warn('!!! redis-server is not installed: the Redis concurrency suites are SKIPPED.');

/** A client of the tests' Redis, to look at the semaphore's state independently of the worker. */
export const redis = hasRedis ? new Redis({ url: services.redisUrl, token: services.redisToken }) : undefined;
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let namespaceCounter = 0;
/** A fresh semaphore namespace per test, so tests never share slots. */
export function redisEnv(overrides: Partial<Env> = {}): Env {
  return { ...env, CONCURRENCY_NAMESPACE: `test-${Date.now()}-${namespaceCounter++}`, ...overrides };
}

/** One call of `tool` through a gateway serving it alone: the answer's status and body, once its background work is done. */
export async function call(
  tool: AnyTool,
  body: unknown,
  callEnv: Env,
  options: ServeOptions = {},
  key = tenantA.apiKey,
  idempotencyKey?: string,
) {
  const ctx = createExecutionContext();
  const response = await createGateway([tool], options).fetch(
    new Request(`http://edge-tools.test/tools/${tool.id}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        ...(idempotencyKey !== undefined && { 'idempotency-key': JSON.stringify(idempotencyKey) }),
      },
      body: JSON.stringify(body),
    }),
    callEnv,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** The semaphore's keys in Redis (the rate limiter's keys live on for their window, by design). */
export async function semaphoreKeys(namespace: string): Promise<string[]> {
  return redis!.keys(`{${namespace}:semaphore}*`);
}
