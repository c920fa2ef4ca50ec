/**
 * The idempotency key as every layer names it: where a call carries it, how long it may be, and
 * how long its record is kept. Claiming and replaying keys is shared/runtime/idempotency.ts.
 */

/** The HTTP request header carrying the key. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** Where an MCP `tools/call` request carries the key: `params._meta["edge-tools/idempotency-key"]`. */
export const IDEMPOTENCY_META_KEY = 'edge-tools/idempotency-key';
/** The longest key accepted, in characters (printable ASCII, so bytes too). */
export const MAX_KEY_LENGTH = 255;

/** How long a key's record (and its stored answer) is kept, from the key's first call. */
export const KEY_TTL_HOURS = 24;
