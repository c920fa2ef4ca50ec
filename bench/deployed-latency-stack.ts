/**
 * What bench/deployed-latency.ts runs against: the Neon and Upstash stand-ins (recording what they
 * serve), a project seeded with the demo data and a pool of API keys and OAuth tokens, the gateway
 * and the bare peer (bench/bare-peer/) under `wrangler dev`. Everything on 127.0.0.1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CorpusOptions } from '../local/corpus.ts';
import { addApiKey, createProject, migrateDatabase } from '../local/database.ts';
import { resetExampleRecords } from '../local/example-records.ts';
import { startNeonStandIn } from '../local/neon-http.ts';
import type { RoundTrips } from '../local/round-trip.ts';
import { seedCorpus } from '../local/seed.ts';
import { seedStudy } from '../local/study-seed.ts';
import { startRedisServer, startUpstashStandIn } from '../local/upstash-rest.ts';
import { freePort, startWranglerDev, type WranglerDev } from '../local/wrangler-dev.ts';
import { createDb } from '../shared/runtime/db.ts';
import { oauthClient } from '../test/support/oauth-client.ts';
import type { Served } from './served-requests.ts';

/** The bare peer's wrangler configuration. */
export const PEER_CONFIG = fileURLToPath(new URL('bare-peer/wrangler.toml', import.meta.url));
/** The bearer token the bench sends the peer (its API key, compared without a query). */
export const PEER_TOKEN = 'bare-peer-token';
/** The calls are a few keys', faster than a person's: the per-key limit is lifted, so that it never refuses one. */
export const RATE_LIMIT = '1000000';

/** Everything a run talks to. */
export interface Stack {
  gateway: WranglerDev;
  peer: WranglerDev;
  databaseUrl: string;
  upstash: { url: string; token: string };
  projectId: string;
  setupKey: string;
  keys: Pool;
  tokens: Pool;
  /** What the stand-ins served since the last sample began. */
  served: Served[];
  lastAnswerAt: number;
  inFlight(): number;
  setRoundTrips(roundTrips: RoundTrips): void;
  stop(): Promise<void>;
}

/** Credentials taken in turn, each no sooner than `spacingMs` after its last use. */
export class Pool {
  readonly #lastUse = new Map<string, number>();
  readonly #spacingMs: number;
  constructor(credentials: string[], spacingMs: number) {
    for (const credential of credentials) this.#lastUse.set(credential, -Infinity);
    this.#spacingMs = spacingMs;
  }
  /** The credential used longest ago, once it may be used again. */
  async take(): Promise<string> {
    const [credential, lastUse] = [...this.#lastUse].sort((a, b) => a[1] - b[1])[0]!;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, lastUse + this.#spacingMs - performance.now())));
    this.#lastUse.set(credential, performance.now());
    return credential;
  }
}

/** How the stack is seeded and paced. */
export interface StackOptions {
  /** API keys (and OAuth tokens) in each pool. */
  pool: number;
  /** How long a credential rests between uses. */
  pacedMs: number;
  corpus: CorpusOptions;
}

/** The stand-ins, seeded, and both workers under `wrangler dev`; null without redis-server. */
export async function startStack({ pool, pacedMs, corpus }: StackOptions): Promise<Stack | null> {
  const redis = await startRedisServer();
  if (!redis) return null;
  const served: Served[] = [];
  let lastAnswerAt = 0;
  const record = (service: Served['service']) => (request: Omit<Served, 'service'>) => {
    served.push({ ...request, service });
    lastAnswerAt = request.answeredAt;
  };
  const upstash = await startUpstashStandIn({ redisPort: redis.port, token: 'bench', onServed: record('redis') });
  const neon = await startNeonStandIn({ onServed: record('database') });
  const persistTo = mkdtempSync(join(tmpdir(), 'edge-tools-latency-kv-'));
  const started: WranglerDev[] = [];
  try {
    await migrateDatabase(neon.connectionString);
    const { projectId, apiKey: setupKey } = await createProject(neon.connectionString, 'Latency bench');
    const keys = await Promise.all(Array.from({ length: pool }, (_, i) => addApiKey(neon.connectionString, projectId, `bench ${i}`)));
    await seedCorpus(neon.connectionString, projectId, corpus);
    await seedStudy(neon.connectionString, projectId);
    await resetExampleRecords(createDb(neon.connectionString), projectId);
    // One after the other: two wrangler dev starting at once contend for the same local sockets.
    const gateway = await startWranglerDev({
      vars: {
        DATABASE_URL: neon.connectionString,
        UPSTASH_REDIS_REST_URL: upstash.url,
        UPSTASH_REDIS_REST_TOKEN: upstash.token,
        // The calls are a few keys', faster than a person's: the per-key limit would refuse some.
        RATE_LIMIT_PER_MINUTE: RATE_LIMIT,
      },
      persistTo,
      inspectorPort: await freePort(),
    });
    started.push(gateway);
    const peer = await startWranglerDev({
      config: PEER_CONFIG,
      vars: { DATABASE_URL: neon.connectionString, PEER_TOKEN },
      inspectorPort: await freePort(),
      // The bare handler has no code mode.
      sandbox: false,
    });
    started.push(peer);
    // Tokens for the HTTP API (the origin), each its own grant, approved with the setup key.
    const client = oauthClient({ origin: gateway.url, send: (request) => fetch(request), apiKey: setupKey });
    const tokens: string[] = [];
    for (let i = 0; i < pool; i++)
      tokens.push((await client.connect(gateway.url, { clientName: `latency bench ${i}`, toolsets: ['study'] })).accessToken);
    served.length = 0;
    return {
      gateway,
      peer,
      databaseUrl: neon.connectionString,
      upstash,
      projectId,
      setupKey,
      keys: new Pool(keys, pacedMs),
      tokens: new Pool(tokens, pacedMs),
      served,
      get lastAnswerAt() {
        return lastAnswerAt;
      },
      inFlight: () => neon.roundTrip.stats().in_flight + upstash.roundTrip.stats().in_flight,
      setRoundTrips: (roundTrips) => {
        neon.roundTrip.set(roundTrips.neon);
        upstash.roundTrip.set(roundTrips.upstash);
      },
      stop: async () => {
        for (const dev of started) dev.stop();
        await upstash.close();
        await redis.stop();
        await neon.close();
        rmSync(persistTo, { recursive: true, force: true });
      },
    };
  } catch (error) {
    for (const dev of started) dev.stop();
    await upstash.close();
    await redis.stop();
    await neon.close();
    rmSync(persistTo, { recursive: true, force: true });
    throw error;
  }
}
