/**
 * Readiness (`GET /health/ready`): can this worker serve tool calls now? Liveness (`GET /health`)
 * only says the worker is up; readiness asks the database (`select 1`) and Redis (PING), at once,
 * each within a timeout, and answers 503 with what a tool call would get when one is down.
 *
 * It needs no key (probes have none), so it tells nothing but up or down and the latency: no host,
 * no error text (the cause goes to the log). Answers are shared per isolate for a second, so
 * probing it cannot multiply queries.
 */
import { sql } from 'drizzle-orm';
import { fail, ok, type Outcome } from '../core/contract.ts';
import { admissionFromEnv, redisFromEnv } from '../concurrency/admission.ts';
import { errorForLog, log } from '../core/log.ts';
import { createDb } from './db.ts';
import { runsLocally, type Env } from './env.ts';
import { roundToHundredths } from '../core/numbers.ts';

/** Defaults of {@link checkReadiness}'s options. */
export const READINESS_DEFAULTS = {
  /** Each dependency must answer within this. */
  timeoutMs: 2_000,
  /** An answer is reused for this long. */
  cacheMs: 1_000,
};

/** One dependency: `in_process` is the semaphore of a worker without Redis (local, or allowed). */
export type DependencyCheck = { status: 'up' | 'down' | 'in_process'; latency_ms: number | null };

/** What readiness reports, in `data` when ready and in `error.details` when not. */
export interface Readiness {
  status: 'ready' | 'not_ready';
  checks: { database: DependencyCheck; redis: DependencyCheck };
}

// The last answer per configuration. Plain data (a settled or pending promise): safe at module scope.
const recent = new Map<string, { at: number; answer: Promise<Outcome<Readiness>> }>();

/** Checks the database and Redis of `env`; never throws. */
export function checkReadiness(env: Env, options: Partial<typeof READINESS_DEFAULTS> = {}): Promise<Outcome<Readiness>> {
  const { timeoutMs, cacheMs } = { ...READINESS_DEFAULTS, ...options };
  const key = `${env.DATABASE_URL}\n${env.UPSTASH_REDIS_REST_URL}\n${env.CONCURRENCY_LIMIT}`;
  const cached = recent.get(key);
  if (cached && Date.now() - cached.at < cacheMs) return cached.answer;
  const answer = probeAll(env, timeoutMs);
  if (recent.size > 16) recent.clear();
  recent.set(key, { at: Date.now(), answer });
  return answer;
}

async function probeAll(env: Env, timeoutMs: number): Promise<Outcome<Readiness>> {
  const [database, redis] = await Promise.all([probeDatabase(env, timeoutMs), probeRedis(env, timeoutMs)]);
  const readiness: Readiness = {
    status: database.status !== 'down' && redis.status !== 'down' ? 'ready' : 'not_ready',
    checks: { database, redis },
  };
  if (readiness.status === 'ready') return ok(readiness, 'Ready: the database and the concurrency service answer.');
  const details = { ...readiness };
  if (database.status === 'down') {
    return fail('DATABASE_ERROR', 'Not ready: the database does not answer, so tool calls would fail.', {
      retryable: true,
      status: 503,
      details,
    });
  }
  return fail('BUSY', 'Not ready: the concurrency service does not answer, so tool calls would be refused.', { retryable: true, details });
}

async function probeDatabase(env: Env, timeoutMs: number): Promise<DependencyCheck> {
  if (!env.DATABASE_URL) return down('database', 'DATABASE_URL is not set');
  const startedAt = performance.now();
  try {
    await createDb(env.DATABASE_URL, { signal: AbortSignal.timeout(timeoutMs) }).execute(sql`select 1`);
    return { status: 'up', latency_ms: roundToHundredths(performance.now() - startedAt) };
  } catch (error) {
    return down('database', errorForLog(error));
  }
}

async function probeRedis(env: Env, timeoutMs: number): Promise<DependencyCheck> {
  const admission = admissionFromEnv(env, { local: runsLocally(env), redis: redisFromEnv(env) });
  if ('ok' in admission) return down('redis', admission.error.message);
  if (admission.backend === 'memory') return { status: 'in_process', latency_ms: null };
  const probe = await admission.probe(timeoutMs);
  return probe.ok ? { status: 'up', latency_ms: roundToHundredths(probe.latencyMs) } : down('redis', `no PONG within ${timeoutMs} ms`);
}

function down(dependency: string, cause: unknown): DependencyCheck {
  log('warn', 'not_ready', { dependency, cause });
  return { status: 'down', latency_ms: null };
}
