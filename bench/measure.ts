/**
 * What the benches share: timing the database client's round trips, percentiles, how figures are
 * printed, and the conditions every figure is printed beside (the load average, the round trips
 * injected into the stand-ins).
 */
import { loadavg } from 'node:os';
import { injectedRoundTrips, type RoundTripDelay, type RoundTrips } from '../local/round-trip.ts';
import { interceptDatabase } from './database-fetch.ts';

/** The round trips the benches' stand-ins answer with: LOCAL_NEON_RTT_MS and the others (local/round-trip.ts), none unless set. */
export const BENCH_ROUND_TRIPS: RoundTrips = injectedRoundTrips();

/**
 * Gives a bench's stand-ins {@link BENCH_ROUND_TRIPS}: called once they are seeded (at their own
 * speed), before anything is measured.
 */
export function injectRoundTrips(standIns: { neon?: { roundTrip: RoundTripDelay }; upstash?: { roundTrip: RoundTripDelay } }): void {
  standIns.neon?.roundTrip.set(BENCH_ROUND_TRIPS.neon);
  standIns.upstash?.roundTrip.set(BENCH_ROUND_TRIPS.upstash);
}

/** The 1-minute load average: the machine may be shared, and every figure depends on it. */
export function loadAverage(): number {
  return loadavg()[0]!;
}

export interface DatabaseTimer {
  /** Milliseconds spent in HTTP round trips to the database since the last reset. */
  elapsed(): number;
  reset(): void;
  /** The body of the last request sent (the statements and their params). */
  lastRequest(): string;
  restore(): void;
}

/** Times every request of the database client (process-wide), until restore(). */
export function timeDatabase(): DatabaseTimer {
  let elapsed = 0;
  let last = '';
  const restore = interceptDatabase(async (input, init, fetch) => {
    last = String(init.body);
    const started = performance.now();
    const response = await fetch(input, init).catch((error: unknown) => {
      // PGlite runs in this thread: while a long statement (or JS work) holds it, the server's
      // keep-alive timer cannot fire, and fires just as the next request reuses the idle socket.
      // That request never reached the server, so it is sent again.
      if ((error as { cause?: { code?: string } }).cause?.code !== 'ECONNRESET') throw error;
      return fetch(input, init);
    });
    const body = await response.arrayBuffer();
    elapsed += performance.now() - started;
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  });
  return {
    elapsed: () => elapsed,
    reset: () => void (elapsed = 0),
    lastRequest: () => last,
    restore,
  };
}

/** The p-quantile (0–1) of `values`, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  return [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil(p * values.length) - 1)]!;
}

/** Milliseconds as printed in the tables: one decimal below 10. */
export function ms(x: number): string {
  return x < 10 ? `${x.toFixed(1)} ms` : `${Math.round(x)} ms`;
}

/** 100000 -> "100,000". */
export function thousands(n: number): string {
  return n.toLocaleString('en');
}

/** The dot product of two vectors of the same length (cosine similarity, for unit vectors). */
export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** The MCP protocol version the benches speak when they call a tool over MCP without an SDK (stateless). */
export const MCP_VERSION = '2026-07-28';

/**
 * A stateless MCP `tools/call` of `name` (protocol {@link MCP_VERSION}: one HTTP request, no
 * `initialize`): its JSON-RPC body and the headers it needs besides the credential's.
 */
export function mcpToolCall(name: string, args: unknown, id: number = 1): { body: unknown; headers: Record<string, string> } {
  return {
    body: {
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: { 'io.modelcontextprotocol/protocolVersion': MCP_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} },
      },
    },
    headers: {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MCP_VERSION,
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
  };
}
