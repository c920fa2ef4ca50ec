/**
 * What every authenticated route outside the tool pipeline shares (the observability routes, the
 * records, `/grants`): the caller from the auth concern, with the worker's one set of options, the
 * query string validated like a tool input, and the envelope. These routes execute no tool, so
 * `meta.attempts` is 0 and no trace row is written. A read runs at once with the gate's read-only
 * client, alongside the credential's confirmation, and its answer waits for it; a route that
 * changes state gets the client that writes from the gate (shared/auth/gate.ts), once passed.
 */
import type { Context } from 'hono';
import type * as z from 'zod';
import { metaWithoutExecution, type Outcome } from '../core/contract.ts';
import { type Parsed } from '../core/body.ts';
import { validateInput } from '../core/validation.ts';
import { deniedToolsets, type Caller } from '../auth/caller.ts';
import type { Toolset } from '../core/toolsets.ts';
import { databaseFailure, type Database } from '../core/database.ts';
import type { Env } from '../runtime/env.ts';
import { unexpected } from '../runtime/execute.ts';
import { log } from '../core/log.ts';
import type { Authorize } from './authorize.ts';
import { respond, scopeOf } from './base.ts';
import { roundToHundredths } from '../core/numbers.ts';

/** Options of {@link authenticated}: the worker's authoriser, and what the route reads. */
export interface ReadRouteOptions {
  authorize: Authorize;
  /** The toolsets whose records the route reads: a credential limited to others is PERMISSION_DENIED. Default: any credential. */
  toolsets?: readonly Toolset[];
}

/**
 * Answers a route for an authorised caller: `run` gets the database (read-only, or the client that
 * writes once the gate passed, with `changesState`) and the caller, and returns an outcome
 * (answered as the envelope) or a finished response. Database failures become DATABASE_ERROR,
 * anything else UNKNOWN_ERROR with a trace id; never throws.
 */
export async function authenticated(
  c: Context<{ Bindings: Env }>,
  route: string,
  run: (db: Database, caller: Caller) => Promise<Outcome<unknown> | Response>,
  { authorize, toolsets }: ReadRouteOptions,
  { changesState = false }: { changesState?: boolean } = {},
): Promise<Response> {
  const traceId = crypto.randomUUID();
  const startedAt = performance.now();
  let answer: Outcome<unknown> | Response;
  try {
    const gate = await authorize(c.req.raw, scopeOf(c), { traceId });
    const what = `${c.req.method} ${new URL(c.req.url).pathname}`;
    const judged = (caller: Caller) => (toolsets ? deniedToolsets(caller, toolsets, what) : undefined);
    if (!gate.ok) answer = gate;
    else if (changesState) {
      const passed = await gate.pass(judged);
      answer = 'error' in passed ? passed : await run(passed.db, passed.caller);
    } else answer = await gate.read(async (db, caller) => judged(caller) ?? run(db, caller));
  } catch (error) {
    const failure = databaseFailure(error);
    if (!failure) log('error', 'read_route_failed', { trace_id: traceId, route, error: String(error) });
    answer = failure ?? unexpected(error, traceId);
  }
  if (answer instanceof Response) return answer;
  const response = respond(answer, {
    ...metaWithoutExecution(route, traceId),
    duration_ms: roundToHundredths(performance.now() - startedAt),
  });
  response.headers.set('cache-control', 'no-store');
  return response;
}

/**
 * Reads a URL's query string into an object and validates it like a tool input: unknown
 * parameters are refused by name; `numeric` parameters that look like numbers become numbers
 * (others stay strings, and the schema says what was expected); a repeated parameter arrives as a
 * list and is refused.
 */
export function readQuery<S extends z.ZodType>(url: string, schema: S, numeric: readonly string[], hint: string): Parsed<z.output<S>> {
  const params = new URL(url).searchParams;
  const query: Record<string, unknown> = {};
  for (const name of new Set(params.keys())) {
    const values = params.getAll(name).map((value) => (numeric.includes(name) && NUMBER.test(value.trim()) ? Number(value) : value));
    query[name] = values.length === 1 ? values[0] : values;
  }
  return validateInput(schema, query, hint);
}

const NUMBER = /^-?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;
