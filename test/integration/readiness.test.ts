/**
 * Liveness and readiness: `GET /health` answers whenever the worker is up; `GET /health/ready`
 * answers 503 as soon as the database or Redis does not, and names no host and no error.
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import logMood from '../../functions/table-tools/log-mood.ts';
import { createGateway } from '../../shared/http/app.ts';
import type { Env } from '../../shared/runtime/env.ts';

const hasRedis = env.TEST_SERVICES.redisUrl !== '';
const gateway = createGateway([logMood]);

async function get(path: string, overrides: Partial<Env> = {}) {
  const ctx = createExecutionContext();
  const response = await gateway.fetch(new Request(`http://edge-tools.test${path}`), { ...env, ...overrides }, ctx);
  await waitOnExecutionContext(ctx);
  return { status: response.status, text: await response.text() };
}

describe('GET /health/ready', () => {
  it('is ready, with each dependency and its latency, without a key', async () => {
    const { status, text } = await get('/health/ready');
    expect(status).toBe(200);
    const body = JSON.parse(text);
    expect(body.data).toMatchObject({
      status: 'ready',
      checks: { database: { status: 'up' }, redis: { status: hasRedis ? 'up' : 'in_process' } },
    });
    expect(body.data.checks.database.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('answers 503 DATABASE_ERROR when the database does not answer, naming no host; liveness still answers', async () => {
    const down = { DATABASE_URL: 'postgres://edge:secret@127.0.0.1:9/edge' };
    const { status, text } = await get('/health/ready', down);
    expect(status).toBe(503);
    const body = JSON.parse(text);
    expect(body.error).toMatchObject({
      code: 'DATABASE_ERROR',
      retryable: true,
      details: { status: 'not_ready', checks: { database: { status: 'down', latency_ms: null } } },
    });
    expect(text).not.toMatch(/127\.0\.0\.1|secret|postgres:|edge@/);
    expect((await get('/health', down)).status).toBe(200);
  });

  it.skipIf(!hasRedis)('answers 503 BUSY when Redis does not answer', async () => {
    const { status, text } = await get('/health/ready', { UPSTASH_REDIS_REST_URL: 'http://127.0.0.1:9' });
    expect(status).toBe(503);
    const body = JSON.parse(text);
    expect(body.error).toMatchObject({ code: 'BUSY', details: { checks: { database: { status: 'up' }, redis: { status: 'down' } } } });
    expect(text).not.toContain('127.0.0.1');
  });

  it('is not ready when a deployed worker has no Redis (and says no more)', async () => {
    // A warm key is not needed: readiness asks no key. The database is down too, as a deployed one would be here: 192.0.2.1
    // is reserved for documentation (TEST-NET-1), a host no local worker has, and nothing answers there.
    const { status, text } = await get('/health/ready', {
      DATABASE_URL: 'postgres://edge:edge@192.0.2.1/edge',
      UPSTASH_REDIS_REST_URL: '',
      UPSTASH_REDIS_REST_TOKEN: '',
    });
    expect(status).toBe(503);
    const body = JSON.parse(text);
    expect(body.error.details.checks.redis).toEqual({ status: 'down', latency_ms: null });
    expect(text).not.toMatch(/UPSTASH|192\.0\.2\.1/);
  });
});
