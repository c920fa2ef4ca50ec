/**
 * What the stand-ins served during one call, read for bench/deployed-latency.ts: each request named
 * by what it is for (the key lookup, admission, the tool's own statements, the trace, ...), the
 * requests sent before the answer, and the tool's statements grouped into the steps it sent them in
 * (the bare peer runs the same steps).
 */
import { createHash } from 'node:crypto';
import type { ServedRequest } from '../local/round-trip.ts';
import { ACQUIRE_SCRIPT, RELEASE_SCRIPT, RENEW_SCRIPT } from '../shared/concurrency/semaphore-lua.ts';
import type { PeerRequest, PeerStatement, PeerSteps } from './bare-peer/worker.ts';

/** A request one of the stand-ins served. */
export interface Served extends ServedRequest {
  service: 'database' | 'redis';
}

/** What a request was for. */
export type Purpose =
  | 'key lookup'
  | 'OAuth grant read'
  | 'idempotency claim'
  | 'idempotency answer stored'
  | 'idempotency claim dropped'
  | 'idempotency purge'
  | 'trace'
  | 'refusal record'
  | 'tool'
  | 'slot acquire'
  | 'rate limit'
  | 'slot release'
  | 'lease renewal'
  | 'slot wake-up wait'
  | 'failed-key count'
  | 'other';

/** Work the pipeline hands to `waitUntil`: sent, never waited for before the answer. */
export const OFF_THE_ANSWER_PATH: ReadonlySet<Purpose> = new Set([
  'trace',
  'refusal record',
  'idempotency purge',
  'slot release',
  'lease renewal',
  'idempotency claim dropped',
]);

/** Database statements by what they are for, the first that matches; anything else is the tool's. */
const STATEMENTS: [RegExp, Purpose][] = [
  // A grant is read with its approving key: looked for before the key lookup.
  [/"oauth_grants"|\boauth_grants\b/, 'OAuth grant read'],
  [/"api_keys"|\bfrom api_keys\b/, 'key lookup'],
  [/insert into idempotency_keys/, 'idempotency claim'],
  [/update idempotency_keys/, 'idempotency answer stored'],
  [/expired_keys/, 'idempotency purge'],
  [/delete from idempotency_keys/, 'idempotency claim dropped'],
  [/"tool_executions"|"tool_counters"/, 'trace'],
  [/tool_refusals/, 'refusal record'],
];

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');
/** The semaphore's scripts, by their text and by the SHA-1 EVALSHA names them with. */
const SCRIPTS = new Map<string, Purpose>(
  (
    [
      [ACQUIRE_SCRIPT, 'slot acquire'],
      [RELEASE_SCRIPT, 'slot release'],
      [RENEW_SCRIPT, 'lease renewal'],
    ] as const
  ).flatMap(([script, purpose]) => [
    [script, purpose],
    [sha1(script), purpose],
  ]),
);

/** A database request as the peer sends it: one statement, or a transaction of the statements. */
function peerRequestOf(request: Served): PeerRequest {
  const body = JSON.parse(request.body) as { query: string; params?: unknown[] } | { queries: { query: string; params?: unknown[] }[] };
  const statement = ({ query, params }: { query: string; params?: unknown[] }): PeerStatement => ({ query, params: params ?? [] });
  return 'queries' in body ? { transaction: body.queries.map(statement) } : statement(body);
}

/** The statements of a database request (one, or a transaction's). */
export function statementsOf(request: Served): PeerStatement[] {
  const sent = peerRequestOf(request);
  return 'transaction' in sent ? sent.transaction : [sent];
}

/** The Redis commands of a request (one, or a pipeline's or transaction's). */
function commandsOf(request: Served): string[][] {
  const body = JSON.parse(request.body) as unknown[] | unknown[][];
  const commands = Array.isArray(body[0]) ? (body as unknown[][]) : [body as unknown[]];
  return commands.map((command) => command.map(String));
}

function commandPurpose([name = '', script = '', , ...rest]: string[]): Purpose {
  const command = name.toLowerCase();
  if (command === 'blpop') return 'slot wake-up wait';
  if (command !== 'evalsha' && command !== 'eval') return 'other';
  const semaphore = SCRIPTS.get(script);
  if (semaphore) return semaphore;
  if (rest.some((key) => key.includes(':auth-failures'))) return 'failed-key count';
  if (rest.some((key) => key.includes(':ratelimit:'))) return 'rate limit';
  return 'other';
}

/** What a request was for: one purpose per statement or command it carried, in order. */
export function purposesOf(request: Served): Purpose[] {
  if (request.service === 'redis') return commandsOf(request).map(commandPurpose);
  return statementsOf(request).map(({ query }) => STATEMENTS.find(([pattern]) => pattern.test(query))?.[1] ?? 'tool');
}

/** Whether the answer may have waited for `request`: it carried something other than `waitUntil` work. */
export function mayBeAwaited(request: Served): boolean {
  return purposesOf(request).some((purpose) => !OFF_THE_ANSWER_PATH.has(purpose));
}

/**
 * Requests sent in turn, grouped into steps: a request joins the step before it when it arrived
 * before any request of that step was answered (it did not wait for them), and starts a new step
 * otherwise.
 */
export function stepsOf(requests: readonly Served[]): Served[][] {
  const steps: Served[][] = [];
  for (const request of [...requests].sort((a, b) => a.arrivedAt - b.arrivedAt)) {
    const current = steps.at(-1);
    if (current && request.arrivedAt < Math.min(...current.map((r) => r.answeredAt))) current.push(request);
    else steps.push([request]);
  }
  return steps;
}

/** Database requests as the bare peer runs them, in the same steps. */
export function peerSteps(requests: readonly Served[]): PeerSteps {
  return stepsOf(requests).map((step) => step.map(peerRequestOf));
}

/** A short name for a database statement: its verb and its first table (`insert mood_entries`). */
export function statementName(query: string): string {
  const text = query.replace(/\s+/g, ' ').trim().toLowerCase();
  const verb = /^(select|insert|update|delete|with)\b/.exec(text)?.[1] ?? text.split(' ')[0];
  const table = /\b(?:from|into|update)\s+"?([a-z_]+)"?/.exec(text)?.[1];
  return table ? `${verb} ${table}` : (verb ?? '');
}

/**
 * One request as the diagnosis prints it: when it went (ms after the call was sent), what for, and
 * which service: `+3 DB key lookup` or `+5 Redis slot acquire + rate limit`.
 */
export function describe(request: Served, sentAt: number): string {
  const purposes = [...new Set(purposesOf(request))];
  const named =
    request.service === 'database' && purposes.length === 1 && purposes[0] === 'tool'
      ? `tool: ${[...new Set(statementsOf(request).map(({ query }) => statementName(query)))].join(', ')}`
      : purposes.join(' + ');
  return `+${Math.round(request.arrivedAt - sentAt)} ${request.service === 'database' ? 'DB' : 'Redis'} ${named}`;
}
