/**
 * The bare peer of bench/deployed-latency.ts: what a team would write instead of edge-tools, a Hono
 * route that runs a tool's queries with `@neondatabase/serverless` itself. No API-key lookup (a
 * fixed bearer token compared in memory), no rate limit, no semaphore, no validation, no trace:
 * only the database round trips.
 *
 * `POST /run` runs the statements it is sent, as the tool sent them: each step's requests in
 * parallel, the steps one after another; a request is one statement, or several in one
 * transaction (one round trip, as drizzle's `batch`). It answers `{ requests }`, or 500 with the
 * database's message.
 */
import { neon, neonConfig } from '@neondatabase/serverless';
import { Hono } from 'hono';

/** One statement as the Neon driver sends it. */
export interface PeerStatement {
  query: string;
  params: unknown[];
}

/** One request to the database: a statement, or a transaction of several. */
export type PeerRequest = PeerStatement | { transaction: PeerStatement[] };

/** The body of `POST /run`: steps in turn, each a list of requests sent in parallel. */
export type PeerSteps = PeerRequest[][];

// Only ever run against the local Neon stand-in, which speaks plain HTTP on its own port.
neonConfig.fetchEndpoint = (host, port) => `http://${host}:${port}/sql`;

/** DATABASE_URL, and PEER_TOKEN: the bearer token the bench sends (the peer's API key, checked without a query). */
const app = new Hono<{ Bindings: { DATABASE_URL: string; PEER_TOKEN: string } }>();

app.post('/run', async (c) => {
  if (c.req.header('authorization') !== `Bearer ${c.env.PEER_TOKEN}`) return c.json({ error: 'unauthorized' }, 401);
  const sql = neon(c.env.DATABASE_URL);
  const steps = await c.req.json<PeerSteps>();
  try {
    for (const step of steps) {
      await Promise.all(
        step.map((request) =>
          'transaction' in request
            ? sql.transaction(request.transaction.map((statement) => sql.query(statement.query, statement.params)))
            : sql.query(request.query, request.params),
        ),
      );
    }
  } catch (error) {
    return c.json({ error: (error as Error).message }, 500);
  }
  return c.json({ requests: steps.flat().length });
});

export default app;
