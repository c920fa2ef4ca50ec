/**
 * A flood of unknown keys from one address, at the scale of a misconfigured agent on a shared host:
 * 10,000 in a burst, and 500 all at once. The database work they cause stays at the address's bound
 * (20 lookups), and a never-used key of another tenant from the same address succeeds at once,
 * during and after it.
 * The gateway has its default settings (the client address is the machine's, whatever header a
 * request sends); the case has a namespace of its own, so its counts stay its own.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import { createGateway } from '../../shared/http/app.ts';
import type { Env } from '../../shared/runtime/env.ts';
import { createTenant, moodRows, send, unknownKey } from './helpers.ts';

const gateway = createGateway(tools);
/** A database no query can reach: a request that needs one answers 503 DATABASE_ERROR. */
const UNREACHABLE_DATABASE = 'postgres://edge:edge@127.0.0.1:9/edge';

async function post(path: string, key: string, body: unknown, callEnv: Partial<Env>) {
  const response = await send(
    new Request(`http://edge-tools.test${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'cf-connecting-ip': `198.51.100.${Math.floor(Math.random() * 250)}`,
      },
      body: JSON.stringify(body),
    }),
    gateway,
    { ...env, ...callEnv },
  );
  return response.status;
}

describe('10,000 unknown keys from one address', { timeout: 300_000 }, () => {
  it('cost 20 lookups, and never refuse or delay another tenant', async () => {
    const namespace = { CONCURRENCY_NAMESPACE: `trust-flood-${crypto.randomUUID()}` };
    const first = [];
    for (let i = 0; i < 20; i++) first.push(await post('/tools/list-plans', unknownKey(), {}, namespace));
    expect(first.every((status) => status === 401)).toBe(true);

    // The rest with no database to reach: any lookup would answer 503; each is refused without one.
    const other = await createTenant('Flooded address');
    const statuses = new Map<number, number>();
    const valid: number[] = [];
    for (let batch = 0; batch < 100; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 100 }, () =>
          post('/tools/list-plans', unknownKey(), {}, { ...namespace, DATABASE_URL: UNREACHABLE_DATABASE }),
        ),
      );
      for (const status of answers) statuses.set(status, (statuses.get(status) ?? 0) + 1);
      // During the flood, the other tenant's key (its first use from this address, then warm) writes at once.
      if (batch % 25 === 0)
        valid.push(
          await post(
            '/tools/log-mood',
            other.apiKey,
            { user_id: `flood-${batch}`, mood: 'happy', energy_level: 5, timestamp: '2031-06-01T08:00:00Z' },
            namespace,
          ),
        );
    }
    expect(Object.fromEntries(statuses)).toEqual({ 429: 10_000 });
    expect(valid).toEqual([200, 200, 200, 200]);
    expect(await moodRows(other.projectId, 'flood-0')).toBe(1);
    expect(await moodRows(other.projectId, 'flood-75')).toBe(1);
  });

  it('sent all at once, cost no more lookups than sent one by one: a lookup counts from when it starts', async () => {
    const namespace = { CONCURRENCY_NAMESPACE: `trust-burst-${crypto.randomUUID()}` };
    const other = await createTenant('Burst address');
    const [burst, valid] = await Promise.all([
      Promise.all(Array.from({ length: 500 }, () => post('/tools/list-plans', unknownKey(), {}, namespace))),
      post(
        '/tools/log-mood',
        other.apiKey,
        { user_id: 'burst', mood: 'happy', energy_level: 5, timestamp: '2031-06-01T08:00:00Z' },
        namespace,
      ),
    ]);
    const statuses = new Map<number, number>();
    for (const status of burst) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    // 401: looked up and unknown; 429: refused without a lookup.
    expect(Object.fromEntries(statuses)).toEqual({ 401: 20, 429: 480 });
    expect(valid).toBe(200);
    expect(await moodRows(other.projectId, 'burst')).toBe(1);
  });
});
