/**
 * `npm run bench -- v8-flags`: what the V8 flag every local workerd runs with (LOCAL_V8_FLAGS,
 * local/wrangler-env.ts: V8's linear-time fallback for regular expressions that backtrack
 * catastrophically) costs a CPU-heavy call. `cluster-by-similarity` of the demo project's 1,000
 * tasks over HTTP, through `wrangler dev` started with V8's defaults and with the flag, in turn
 * (interleaved, so both see the same load): one warm-up call, then timed calls, per start.
 */
import { eq } from 'drizzle-orm';
import { tasks } from '../drizzle/schema.ts';
import { openDemoData } from '../local/demo-data.ts';
import { startRedisServer, startUpstashStandIn } from '../local/upstash-rest.ts';
import { startWranglerDev } from '../local/wrangler-dev.ts';
import { LOCAL_V8_FLAGS } from '../local/wrangler-env.ts';
import { createDb } from '../shared/runtime/db.ts';
import { injectRoundTrips, percentile } from './measure.ts';

/** Starts per flag set, and timed calls per start. */
const ROUNDS = 2;
const CALLS = 3;

/** The flag sets compared: V8's defaults, and the flag. */
const FLAG_SETS = [
  { name: "V8's defaults", v8Flags: '' },
  { name: `\`${LOCAL_V8_FLAGS}\``, v8Flags: LOCAL_V8_FLAGS },
];

/** Runs the comparison on a `wrangler dev` of the demo data, and answers the markdown section. */
export async function runV8FlagsBench(): Promise<string> {
  const { neon, demo } = await openDemoData();
  const redis = await startRedisServer();
  const upstash = redis ? await startUpstashStandIn({ redisPort: redis.port, token: crypto.randomUUID() }) : undefined;
  injectRoundTrips({ neon, upstash });
  try {
    const rows = await createDb(neon.connectionString)
      .select({ id: tasks.id })
      .from(tasks)
      .where(eq(tasks.projectId, demo.projectId))
      .limit(1_000);
    const body = JSON.stringify({ task_ids: rows.map((row) => row.id) });
    const seconds = new Map<string, number[]>(FLAG_SETS.map((set) => [set.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const set of FLAG_SETS) {
        const dev = await startWranglerDev({
          v8Flags: set.v8Flags,
          vars: {
            DATABASE_URL: neon.connectionString,
            ...(upstash && { UPSTASH_REDIS_REST_URL: upstash.url, UPSTASH_REDIS_REST_TOKEN: upstash.token }),
          },
        });
        try {
          const call = async () => {
            const started = performance.now();
            const response = await fetch(`${dev.url}/tools/cluster-by-similarity`, {
              method: 'POST',
              headers: { authorization: `Bearer ${demo.apiKey}`, 'content-type': 'application/json' },
              body,
            });
            const answer = (await response.json()) as { success: boolean; message: string };
            if (!answer.success) throw new Error(`cluster-by-similarity failed (${response.status}): ${answer.message}`);
            return (performance.now() - started) / 1000;
          };
          await call();
          for (let i = 0; i < CALLS; i++) seconds.get(set.name)!.push(await call());
        } finally {
          dev.stop();
        }
      }
    }
    const row = (name: string) => {
      const values = seconds.get(name)!;
      return `| ${name} | ${values.map((value) => value.toFixed(2)).join(', ')} | ${percentile(values, 0.5).toFixed(2)} |`;
    };
    const [defaults, flagged] = FLAG_SETS.map((set) => percentile(seconds.get(set.name)!, 0.5));
    return [
      '## What the local V8 flag costs a CPU-heavy call (bench/v8-flags.ts)',
      '',
      `\`cluster-by-similarity\` of ${rows.length.toLocaleString('en')} tasks (the demo project) over HTTP, through \`wrangler dev\` started with each flag set in turn, ${ROUNDS} starts each, interleaved; one warm-up call then ${CALLS} timed calls per start.`,
      '',
      '| V8 flags | seconds | median |',
      '|---|---|---:|',
      ...FLAG_SETS.map((set) => row(set.name)),
      '',
      `With the flag the median call took ${(flagged! / defaults!).toFixed(2)} times as long as with V8's defaults.`,
      '',
    ].join('\n');
  } finally {
    await upstash?.close();
    await redis?.stop();
    await neon.close();
  }
}
