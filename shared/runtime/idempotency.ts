/**
 * `Idempotency-Key`, after draft-ietf-httpapi-idempotency-key-header: a client that sends a key with
 * a write call may repeat the call (a timeout, a lost answer) and get the first call's answer back
 * instead of a second execution.
 *
 * - The key comes in the `Idempotency-Key` header (HTTP) or the `tools/call` request's
 *   `_meta["edge-tools/idempotency-key"]` (MCP): 1 to 255 printable ASCII characters.
 * - Records live in Postgres (`idempotency_keys`), next to the rows the calls write, scoped to the
 *   project and the tool. The first call claims the key in one statement (insert, or take over an
 *   expired record or an abandoned claim), runs, and stores its answer. A claim whose answer was
 *   lost is recognised when the statement is sent again, or dropped once the call is answered, so
 *   it never holds the key for a call that did not run.
 * - Same key, same input (a SHA-256 of the validated input as canonical JSON): the stored answer
 *   is replayed (`meta.replayed: true`) and nothing runs. Another input: IDEMPOTENCY_MISMATCH (422).
 *   While the first call still runs: CONFLICT (409), retryable, with a delay to wait.
 * - Stored: a success, and a failure after execution began that repeating would not change. A
 *   failure that says `retryable: true`, and every refusal before execution (validation, rate
 *   limit, BUSY), is not stored: the claim is dropped and the same key may run again.
 * - The call's ids (`context.idFor`) derive from the key and the input ({@link callIds}), so a
 *   call run again after an earlier one died half-way (an abandoned claim taken over, a retryable
 *   failure, an expired record) recognises the rows that one wrote. A call without a key is keyed
 *   by its trace id: a write the database left unconfirmed names it as the key to repeat it with.
 * - Records expire after 24 h (`KEY_TTL_HOURS`); expired records and old write receipts are
 *   purged after keyed calls, off the response's critical path ({@link purgeExpired}).
 */
import { sql } from 'drizzle-orm';
import { fail, type Failure, type Outcome } from '../core/contract.ts';
import type { Parsed } from '../core/body.ts';
import { databaseError, databaseFailure, type Database } from '../core/database.ts';
import { nameBasedUuid } from './ids.ts';
import { withRetries } from './retry.ts';
import { errorForLog, log } from '../core/log.ts';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_META_KEY, KEY_TTL_HOURS, MAX_KEY_LENGTH } from '../core/idempotency-key.ts';
import { sha256Hex } from '../core/hashing.ts';

const KEY_TTL_MS = KEY_TTL_HOURS * 3_600_000;
/**
 * How long a claim holds while its call runs (queue wait included). A claim still running past it
 * is treated as abandoned (its worker died) and the next call with the same key and input takes
 * it over; a call that really runs longer is then repeated, safely, since its ids derive from the key.
 */
const CLAIM_LEASE_MS = 60_000;
/** The pause before the claim statement is sent again after a transient failure (a lost answer). */
const CLAIM_RETRY_DELAY_MS = 200;
/** Write receipts (see drizzle/schema.ts) are kept as long as keys: a keyed call run again within its key's life finds them. */
const RECEIPT_TTL_MS = KEY_TTL_MS;
/** Rows deleted per table by one purge, so that a purge stays a small statement. */
const PURGE_BATCH = 500;

const KEY_CHARACTERS = /^[\x20-\x7e]+$/;
/** A bare (unquoted) header value: visible ASCII without quotes, backslashes, commas or semicolons. */
const BARE_KEY = /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]+$/;

/**
 * The key of an HTTP request, from its `Idempotency-Key` header: an RFC 8941 string
 * (`"8e03978e-40d5-43e8-bc93-6894a57f9324"`, as the draft specifies) or, as many clients send it,
 * the bare value. Undefined without the header; VALIDATION_ERROR when malformed or repeated.
 */
export function keyFromHeader(value: string | null): Parsed<string> | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  const key = trimmed.startsWith('"') ? unquote(trimmed) : BARE_KEY.test(trimmed) ? trimmed : undefined;
  if (key === undefined) {
    return invalidKey(
      IDEMPOTENCY_HEADER,
      'a quoted string ("...") or a bare value of visible ASCII without quotes, commas or semicolons, sent once',
      value,
    );
  }
  return checkKey(key, IDEMPOTENCY_HEADER);
}

/** The key of an MCP `tools/call` request, from its `params._meta`. Undefined when absent. */
export function keyFromMeta(meta: unknown): Parsed<string> | undefined {
  const value = typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>)[IDEMPOTENCY_META_KEY] : undefined;
  if (value === undefined || value === null) return undefined;
  const field = `_meta.${IDEMPOTENCY_META_KEY}`;
  if (typeof value !== 'string') return invalidKey(field, 'a string', JSON.stringify(value) ?? String(value));
  return checkKey(value, field);
}

/** An RFC 8941 sf-string's value, or undefined when `text` is not exactly one. */
function unquote(text: string): string | undefined {
  let value = '';
  for (let i = 1; i < text.length; i++) {
    const char = text[i]!;
    if (char === '"') return i === text.length - 1 ? value : undefined;
    if (char === '\\') {
      const next = text[++i];
      if (next !== '"' && next !== '\\') return undefined;
      value += next;
    } else if (char < ' ' || char > '~') {
      return undefined;
    } else {
      value += char;
    }
  }
  return undefined; // no closing quote
}

function checkKey(key: string, field: string): Parsed<string> {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || !KEY_CHARACTERS.test(key)) {
    return invalidKey(field, `1 to ${MAX_KEY_LENGTH} printable ASCII characters`, key);
  }
  return { ok: true, value: key };
}

function invalidKey(field: string, expected: string, received: string): Failure {
  const shown = received.length > 60 ? `${received.slice(0, 60)}… (${received.length} characters)` : received;
  const message = `The idempotency key (${field}) must be ${expected}, but received ${JSON.stringify(shown)}.`;
  return fail('VALIDATION_ERROR', message, {
    hint: `Send a fresh random key per logical call, e.g. ${IDEMPOTENCY_HEADER}: "8e03978e-40d5-43e8-bc93-6894a57f9324", and the same key only when repeating that call.`,
    details: { fields: [{ field, code: 'invalid_idempotency_key', expected, received: JSON.stringify(shown), message }] },
  });
}

/** What a call may do with its key. */
export type Claim =
  /** The call runs; ids derive from the key; `settle` stores the answer (or drops the claim): after the answer, through `waitUntil`. */
  | {
      ok: true;
      replay?: undefined;
      idFor(purpose: string): Promise<string>;
      settle(outcome: Outcome<unknown>): Promise<void>;
      release(): Promise<void>;
    }
  /** The key's answer is stored: answer it, run nothing. `traceId` is the call that produced it. */
  | { ok: true; replay: { outcome: Outcome<unknown>; traceId: string } }
  /** IDEMPOTENCY_MISMATCH, CONFLICT (still running) or a database failure: answer it, run nothing. */
  | Failure;

export interface ClaimRequest {
  projectId: string;
  toolId: string;
  key: string;
  /** The validated input, fingerprinted. */
  input: unknown;
  traceId: string;
  /** Runs work after the answer is sent (the purge of expired records). */
  defer(work: () => Promise<unknown>): void;
}

/**
 * Claims `key` for one call, in one database round trip: a new key, an expired record or an
 * abandoned claim with the same input is claimed; otherwise the record decides (replay, mismatch,
 * still running). Never throws.
 *
 * A claim carries the call's trace id. When the statement's answer is lost (the database committed
 * it, the answer never came back), the statement is sent again and recognises the call's own claim.
 * When no answer comes at all, the claim is dropped by its trace id after the call is answered, so
 * that the key is not held for the claim's lease by a call that never ran.
 */
export async function claimIdempotencyKey(db: Database, request: ClaimRequest): Promise<Claim> {
  const claim = await claimOnce(db, request);
  // The first call's answer is stored after it was sent: a repeat that arrives on the same isolate
  // before it landed waits for it rather than hearing that the call still runs.
  const storing = settling.get(settlingId(request));
  if (storing && !claim.ok && claim.error.details?.reason === 'idempotency_key_in_use') {
    await storing;
    return claimOnce(db, request);
  }
  return claim;
}

/**
 * Answers being stored, per isolate, by project, tool and key: each entry lives only while its
 * statement is under way (the calls in flight bound it).
 */
const settling = new Map<string, Promise<void>>();

function settlingId({ projectId, toolId, key }: Pick<ClaimRequest, 'projectId' | 'toolId' | 'key'>): string {
  return `${projectId}\n${toolId}\n${key}`;
}

async function claimOnce(db: Database, request: ClaimRequest): Promise<Claim> {
  const { projectId, toolId, key, traceId, defer } = request;
  const fingerprint = await fingerprintOf(request.input);
  const where = sql`project_id = ${projectId} and tool = ${toolId} and key = ${key} and trace_id = ${traceId}`;
  const logged = (event: string) => (error: unknown) => log('warn', event, { tool: toolId, trace_id: traceId, error: errorForLog(error) });
  // Unreleased, the claim ends with its lease: the same key then runs again.
  const release = () =>
    db
      .execute(sql`delete from idempotency_keys where ${where} and status = 'running'`)
      .then(() => undefined, logged('idempotency_release_failed'));
  const claimed = await withRetries(() => claimStatement(db, request, fingerprint), { delayMs: CLAIM_RETRY_DELAY_MS });
  if (!claimed.outcome.ok) {
    defer(release);
    return claimed.outcome;
  }
  const row = claimed.outcome.data;

  if (row.claimed) {
    return {
      ok: true,
      idFor: callIds(projectId, toolId, key, request.input),
      release,
      settle(outcome) {
        // An answer that invites a retry is not stored: the same key may run again.
        if (!outcome.ok && outcome.error.retryable) return release();
        // The trace id fences the update: a claim taken over in the meantime belongs to its new call.
        // Unstored, the claim is taken over once its lease ends, and the call runs again, safely.
        const id = settlingId(request);
        const stored = db
          .execute(
            sql`update idempotency_keys set status = 'completed', locked_until = null, response = ${JSON.stringify(storable(outcome))}::json where ${where}`,
          )
          .then(() => undefined, logged('idempotency_store_failed'))
          .finally(() => {
            if (settling.get(id) === stored) settling.delete(id);
          });
        settling.set(id, stored);
        defer(() => purgeExpired(db));
        return stored;
      },
    };
  }
  const quoted = JSON.stringify(key.length > 60 ? `${key.slice(0, 60)}…` : key);
  if (row.fingerprint !== null && row.fingerprint !== fingerprint) {
    return fail(
      'IDEMPOTENCY_MISMATCH',
      `The idempotency key ${quoted} was already used with a different input for '${toolId}'. A key names one call: repeat that call's input exactly to get its answer, or use a new key for a new call.`,
      {
        hint: 'Generate a fresh random key (e.g. a UUID) for every new call, and reuse it only to repeat that same call.',
        details: { reason: 'idempotency_key_reused' },
      },
    );
  }
  if (row.status === 'completed' && row.response !== null) {
    return { ok: true, replay: { outcome: row.response, traceId: row.trace_id! } };
  }
  // Running (or claimed by a concurrent call a moment ago, not yet visible here).
  const retryAfterMs = Math.min(Math.max(row.lease_left_ms ?? 1_000, 1_000), 2_000);
  return fail(
    'CONFLICT',
    `A call with the idempotency key ${quoted} is still running for '${toolId}'. Repeat the same call in a moment: it will receive that call's answer.`,
    {
      retryable: true,
      hint: `Wait ${Math.ceil(retryAfterMs / 1000)} s, then send the same call with the same key.`,
      details: { reason: 'idempotency_key_in_use', retry_after_ms: retryAfterMs },
    },
  );
}

/**
 * The claim statement: inserts the record, or takes over an expired one, an abandoned claim with
 * the same input, or this call's own claim (an earlier send whose answer was lost); then reads the
 * record as it stands.
 */
async function claimStatement(db: Database, request: ClaimRequest, fingerprint: string): Promise<Outcome<ClaimRow>> {
  const { projectId, toolId, key, traceId } = request;
  try {
    const { rows } = await db.execute(sql`
      with claimed as (
        insert into idempotency_keys as k (project_id, tool, key, fingerprint, status, trace_id, locked_until, expires_at)
        values (${projectId}, ${toolId}, ${key}, ${fingerprint}, 'running', ${traceId},
                now() + ${CLAIM_LEASE_MS}::int * interval '1 millisecond', now() + ${KEY_TTL_MS}::bigint * interval '1 millisecond')
        on conflict (project_id, tool, key) do update
          set fingerprint = excluded.fingerprint, status = 'running', trace_id = excluded.trace_id, response = null,
              locked_until = excluded.locked_until, created_at = now(), expires_at = excluded.expires_at
          where k.expires_at <= now()
             or (k.status = 'running' and k.trace_id = excluded.trace_id)
             or (k.status = 'running' and k.locked_until <= now() and k.fingerprint = excluded.fingerprint)
        returning 1)
      select exists (select 1 from claimed) as claimed, k.fingerprint, k.status, k.trace_id, k.response,
             greatest(0, ceil(extract(epoch from k.locked_until - now()) * 1000))::int as lease_left_ms
      from (select 1) as one
      left join idempotency_keys k on k.project_id = ${projectId} and k.tool = ${toolId} and k.key = ${key}`);
    return { ok: true, data: rows[0] as unknown as ClaimRow, message: '' };
  } catch (error) {
    return databaseFailure(error) ?? databaseError('The idempotency key could not be checked.', { kind: 'permanent', cause: error });
  }
}

interface ClaimRow {
  claimed: boolean;
  fingerprint: string | null;
  status: 'running' | 'completed' | null;
  trace_id: string | null;
  response: Outcome<unknown> | null;
  lease_left_ms: number | null;
}

/**
 * The ids of a write call with `key` and `input` (`context.idFor`): a name-based UUID of the
 * project, the tool, the input's fingerprint, the key and the purpose, so that every call with
 * the same key and input writes (and recognises) the same rows. A call sent without a key is keyed
 * by its trace id: the same call repeated with that trace id as its key recognises what it wrote.
 */
export function callIds(projectId: string, toolId: string, key: string, input: unknown): (purpose: string) => Promise<string> {
  let fingerprint: Promise<string> | undefined;
  return async (purpose) => nameBasedUuid(`${projectId}:${toolId}:key:${await (fingerprint ??= fingerprintOf(input))}:${key}:${purpose}`);
}

/**
 * The key of the `position`-th tool call (from 0, in the order the calls were made) of code-mode
 * code sent with the key `key` (shared/codemode/): derived from both and from the call's tool and
 * input, so the same code sent again with the same key gives each of its calls the key it had,
 * and their writes replay instead of running twice.
 */
export async function innerCallKey(key: string, position: number, toolId: string, input: unknown): Promise<string> {
  return `code:${await sha256Hex(`${key}\n${position}\n${toolId}\n${canonicalJson(input)}`)}`;
}

/** A validated input's fingerprint: the SHA-256 of its canonical JSON, in hex. */
function fingerprintOf(input: unknown): Promise<string> {
  return sha256Hex(canonicalJson(input));
}

/** The outcome as stored for replay: what the caller saw, without the cause (kept in the trace only). */
function storable(outcome: Outcome<unknown>): Outcome<unknown> {
  if (outcome.ok) return outcome;
  const { cause: _cause, ...failure } = outcome;
  return failure;
}

/**
 * Deletes expired idempotency records and write receipts older than {@link RECEIPT_TTL_MS}, a
 * bounded batch of each. Never rejects. Run after keyed calls; a scheduled job may run it too.
 */
export async function purgeExpired(db: Database): Promise<void> {
  await db
    .execute(
      sql`
      with expired_keys as (
        delete from idempotency_keys where (project_id, tool, key) in (
          select project_id, tool, key from idempotency_keys where expires_at <= now() limit ${PURGE_BATCH})),
      old_receipts as (
        delete from write_receipts where id in (
          select id from write_receipts where created_at <= now() - ${RECEIPT_TTL_MS}::bigint * interval '1 millisecond' limit ${PURGE_BATCH}))
      select 1`,
    )
    .then(
      () => undefined,
      (error: unknown) => log('warn', 'idempotency_purge_failed', { error: errorForLog(error) }),
    );
}

/** JSON with object keys sorted: equal values give equal text (RFC 8785 for JSON-shaped values). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (typeof value === 'object' && value !== null && !(value instanceof Date)) {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, item]) => `${JSON.stringify(name)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
