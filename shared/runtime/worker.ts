/**
 * A worker's module: its HTTP routes, and the `scheduled` handler the gateway's Cron Trigger runs
 * (GATEWAY_CRON in local/deploy.ts): retention of the trace (shared/observability/retention.ts) and the
 * purge of expired idempotency records (shared/runtime/idempotency.ts).
 */
import { log } from '../core/log.ts';
import { runRetention } from '../observability/retention.ts';
import { createDb } from './db.ts';
import type { Env } from './env.ts';
import { purgeExpired } from './idempotency.ts';

type FetchHandler = (request: Request, env: Env, ctx: ExecutionContext) => Response | Promise<Response>;

/**
 * The module a worker exports: `app`'s `fetch`, and a `scheduled` handler that deletes expired
 * executions and refusals, and expired idempotency records (which keyed calls purge too, but only
 * when keyed calls come). Every worker has both; only the gateway is deployed with a Cron Trigger,
 * so retention runs once per deployment (a run overlapping another would be harmless).
 *
 * @example
 * export default workerModule(createGateway(tools));
 */
export function workerModule<F extends FetchHandler>(app: { fetch: F }) {
  return {
    fetch: app.fetch,
    async scheduled(_controller: ScheduledController, env: Env, ctx: ExecutionContext): Promise<void> {
      if (!env.DATABASE_URL) {
        log('error', 'retention_skipped', { reason: 'The deployment has no DATABASE_URL configured.' });
        return;
      }
      const db = createDb(env.DATABASE_URL);
      ctx.waitUntil(Promise.all([runRetention(db, env), purgeExpired(db)]));
    },
  } satisfies ExportedHandler<Env>;
}
