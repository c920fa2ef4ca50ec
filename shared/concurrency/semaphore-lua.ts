/**
 * The Lua scripts of RedisSemaphore (./semaphore.ts). Each runs atomically in Redis; each is
 * idempotent per call id, because the REST client retries requests that failed on the network.
 *
 * Keys (one hash tag, so they share a cluster slot): KEYS[1] holders ZSET (id -> lease deadline),
 * KEYS[2] queue ZSET (id -> ticket), KEYS[3] seen ZSET (waiter id -> liveness deadline), KEYS[4]
 * seq (ticket counter), KEYS[5] gone ZSET (tombstones: id -> forget-by), KEYS[6] the limit the
 * namespace is used with, KEYS[7] heard (when a script last ran), KEYS[8] the caller's wake-up list.
 * Other waiters' wake lists are derived from the wake prefix (undeclared keys, same hash tag).
 *
 * ARGV: id, wake key prefix, limit, lease ms, liveness ms, first lease ms, tombstone ms, stall ms. Every deadline comes from Redis TIME; clients send durations only.
 */

/** The order of `KEYS` the scripts expect (the caller's wake-up list comes last). */
export const SCRIPT_KEYS = ['holders', 'queue', 'seen', 'seq', 'gone', 'limit', 'heard'] as const;

const PRELUDE = `
local holders, queue, seen, seq, gone, limitKey, heard, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local id, wakePrefix = ARGV[1], ARGV[2]
local limit, leaseMs, livenessMs = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local firstLeaseMs, tombstoneMs, stallMs = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

-- While anyone holds or waits, some script runs every few seconds (renewals, polls). A longer
-- silence means Redis, or the way to it, stalled: nobody could renew or poll meanwhile, so every
-- lease and liveness deadline gets a first lease's time from now before anything is reaped.
local function surviveStall()
  local last = tonumber(redis.call('GET', heard))
  if last and now - last > stallMs then
    for _, key in ipairs({holders, seen}) do
      for _, member in ipairs(redis.call('ZRANGEBYSCORE', key, '-inf', now + firstLeaseMs)) do
        redis.call('ZADD', key, now + firstLeaseMs, member)
      end
    end
  end
  redis.call('SET', heard, now)
end

-- Frees slots whose lease ran out, drops waiters that stopped polling and forgets old tombstones.
local function reap()
  for _, expired in ipairs(redis.call('ZRANGEBYSCORE', holders, '-inf', now)) do
    redis.call('ZREM', holders, expired)
    redis.call('DEL', wakePrefix .. expired)
  end
  for _, silent in ipairs(redis.call('ZRANGEBYSCORE', seen, '-inf', now)) do
    redis.call('ZREM', queue, silent)
    redis.call('ZREM', seen, silent)
    redis.call('DEL', wakePrefix .. silent)
  end
  redis.call('ZREMRANGEBYSCORE', gone, '-inf', now)
end

-- Gives free slots to the smallest tickets. The caller gets a first lease; any other waiter is
-- handed its slot, woken through its list, and must claim it by its liveness deadline, or within a
-- first lease if that is later (a dead waiter keeps a slot idle no longer than an orphaned grant).
local function grant()
  local free = limit - redis.call('ZCARD', holders)
  if free <= 0 then return end
  for _, waiter in ipairs(redis.call('ZRANGE', queue, 0, free - 1)) do
    local deadline = now + firstLeaseMs
    if waiter ~= id then
      deadline = math.max(tonumber(redis.call('ZSCORE', seen, waiter)) or now, now + firstLeaseMs)
      redis.call('RPUSH', wakePrefix .. waiter, 1)
      redis.call('PEXPIRE', wakePrefix .. waiter, deadline - now + 1000)
    end
    redis.call('ZREM', queue, waiter)
    redis.call('ZREM', seen, waiter)
    redis.call('ZADD', holders, deadline, waiter)
  end
end

-- Keys outlive their last deadline by a tombstone's life, so that they outlast a stalled Redis,
-- and an idle semaphore leaves nothing behind (the limit and the last-heard time are kept only
-- while someone holds or waits: then any limit may take over).
local function expire()
  if redis.call('ZCARD', queue) == 0 then
    redis.call('DEL', seq)
    if redis.call('ZCARD', holders) == 0 then redis.call('DEL', limitKey, heard) end
  end
  local last = now
  for _, key in ipairs({holders, seen, gone}) do
    local top = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    if top[2] then last = math.max(last, tonumber(top[2])) end
  end
  for _, key in ipairs({holders, queue, seen, seq, gone, limitKey, heard}) do
    redis.call('PEXPIRE', key, last - now + tombstoneMs)
  end
end
`;

/** ACQUIRE's first reply value when the namespace is used with another limit. */
export const MISCONFIGURED = -1;
/** ACQUIRE's first reply value when the call's RELEASE got there first. */
export const ALREADY_LEFT = -2;

/**
 * ACQUIRE: returns {1, waiters ahead at this call} when the caller holds a slot, {0, waiters ahead}
 * when it waits, {MISCONFIGURED, limit in use} when the namespace is in use with another limit,
 * {ALREADY_LEFT, 0} when the call has already left (this request arrived after its RELEASE).
 */
export const ACQUIRE_SCRIPT = `${PRELUDE}
surviveStall()
reap()
if redis.call('ZSCORE', gone, id) then
  expire()
  return {${ALREADY_LEFT}, 0}
end
local inUse = tonumber(redis.call('GET', limitKey))
if inUse and inUse ~= limit and redis.call('ZCARD', holders) + redis.call('ZCARD', queue) > 0 then
  expire()
  return {${MISCONFIGURED}, inUse}
end
redis.call('SET', limitKey, limit)
local lease = tonumber(redis.call('ZSCORE', holders, id))
if lease then
  -- Already granted: a retried request, or a hand-over this poll claims.
  redis.call('ZADD', holders, math.max(lease, now + firstLeaseMs), id)
  redis.call('DEL', wake)
  expire()
  return {1, 0}
end
if not redis.call('ZSCORE', queue, id) then
  redis.call('ZADD', queue, redis.call('INCR', seq), id)
end
redis.call('ZADD', seen, now + livenessMs, id)
local ahead = redis.call('ZRANK', queue, id)
grant()
expire()
if redis.call('ZSCORE', holders, id) then return {1, ahead} end
return {0, redis.call('ZRANK', queue, id)}
`;

/**
 * RELEASE: leaves the semaphore (slot or queue) and hands freed slots over. 1 if it held a live
 * lease. A call that held nothing and had no ticket leaves a tombstone, so its own ACQUIRE, still
 * on its way (sent before the caller gave up), takes nothing when it arrives.
 */
export const RELEASE_SCRIPT = `${PRELUDE}
surviveStall()
reap()
local held = redis.call('ZREM', holders, id)
local queued = redis.call('ZREM', queue, id)
redis.call('ZREM', seen, id)
redis.call('DEL', wake)
if held == 0 and queued == 0 then redis.call('ZADD', gone, now + tombstoneMs, id) end
grant()
expire()
return held
`;

/**
 * RENEW: extends a lease to the full lease (also claims a handed-over slot). 0 once the lease was
 * reaped. An expired lease not yet reaped is still extended: its slot cannot have gone to anyone else.
 */
export const RENEW_SCRIPT = `${PRELUDE}
surviveStall()
local live = redis.call('ZSCORE', holders, id)
if live then
  redis.call('ZADD', holders, now + leaseMs, id)
  redis.call('DEL', wake)
end
expire()
return live and 1 or 0
`;
