/**
 * Lua scripts of the Redis store. Each touches exactly one key (`KEYS[1]`), so they run on Redis
 * Cluster. Values: `L:<leaseEndsAt>:<token>` for a claim, `D:<expiresAt>` for a completed record,
 * `A:<until>:<token>` for an abandoned token (free for every claimer but that token's own claim;
 * epoch ms). Times are compared in the script against `ARGV` "now" (the injected clock) or, when it
 * is `-1`, against the Redis server's `TIME`, so app hosts with skewed clocks agree on lease ends.
 * Keys also get a `PX` expiry (relative, so skew-free) and disappear by themselves.
 *
 * On the server's time (no injected clock) a claim and a completed record leave their end empty
 * (`L::<token>`, `D:`): they end when the key expires, and the scripts read that end as now + the
 * key's `PTTL`. A claim of a free key is then a plain `SET key L::<token> NX PX leaseMs` (redis.ts),
 * and a token's own lease is known to its holder value for value, so complete, extend and release
 * compare the whole value ({@link SWAP_SCRIPT}, {@link DROP_SCRIPT}): no clock, no parsing.
 */

// Shared prologue: resolves `now` in epoch ms (`server`: read from TIME, ends left empty).
const NOW = `
local now = tonumber(ARGV[3])
local server = now < 0
if server then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- A record's end: its own, or for an empty one (a claim made by SET NX) the key's expiry.
local function ends(at)
  if at ~= '' then return tonumber(at) end
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then return now + ttl end
  return nil
end
`;

// Compare-and-set prologue: the key must still hold this token's unexpired claim.
const OWNED = `${NOW}
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local at, tok = string.match(v, '^L:(%d*):(.+)$')
if tok ~= ARGV[1] then return 0 end
at = ends(at)
if not at or at <= now then return 0 end
`;

/**
 * ARGV: token, leaseMs, now|-1: the claim of a key that `SET NX` found taken (or of a client without
 * `set`). Returns {'claimed', leaseEndsAt} | {'in_progress', leaseEndsAt} | {'completed'}. A claim
 * whose own token was abandoned first gets {'in_progress', now} and writes nothing; one whose token
 * already holds the lease (a client resending it after a reconnect) gets that lease.
 */
export const CLAIM_SCRIPT = `${NOW}
local v = redis.call('GET', KEYS[1])
if v then
  local kind, at, tok = string.match(v, '^(%a):(%d*):?(.*)$')
  if kind then at = ends(at) end
  if at and at > now then
    if kind == 'D' then return {'completed'} end
    if kind == 'L' then
      if tok == ARGV[1] then return {'claimed', string.format('%.0f', at)} end
      return {'in_progress', string.format('%.0f', at)}
    end
    if tok == ARGV[1] then return {'in_progress', string.format('%.0f', now)} end
  end
end
local ends = string.format('%.0f', now + tonumber(ARGV[2]))
redis.call('SET', KEYS[1], 'L:' .. (server and '' or ends) .. ':' .. ARGV[1], 'PX', ARGV[2])
return {'claimed', ends}
`;

/** ARGV: token, ttlMs, now (an injected clock's). Returns 1 if completed, 0 if the token no longer owns the key. */
export const COMPLETE_SCRIPT = `${OWNED}
redis.call('SET', KEYS[1], 'D:' .. string.format('%.0f', now + tonumber(ARGV[2])), 'PX', ARGV[2])
return 1
`;

/**
 * On the server's time: ARGV: the token's lease (`L::<token>`), the value to write, its `PX`. Writes
 * it only over that very lease (a key that holds it has not expired): complete (`D:`) and extend
 * (the same lease). Returns 1 if written, 0 if the token no longer owns the key.
 */
export const SWAP_SCRIPT = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`;

/** On the server's time: ARGV: the token's lease (`L::<token>`). Deletes the key only if it holds it. */
export const DROP_SCRIPT = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;

/** ARGV: token, unused, now (an injected clock's). Returns 1 if released, 0 if the token no longer owns the key. */
export const RELEASE_SCRIPT = `${OWNED}
redis.call('DEL', KEYS[1])
return 1
`;

/** ARGV: token, leaseMs, now (an injected clock's). Returns 1 if extended, 0 if the token no longer owns the key. */
export const EXTEND_SCRIPT = `${OWNED}
redis.call('SET', KEYS[1], 'L:' .. string.format('%.0f', now + tonumber(ARGV[2])) .. ':' .. ARGV[1], 'PX', ARGV[2])
return 1
`;

/**
 * ARGV: token, leaseMs, now|-1. Drops this token's live lease, or marks the key so that this token's
 * claim, if it runs later, is a no-op. Returns 1 when no claim with the token can hold the key (also
 * when the key is completed), 0 while another token's live lease holds it (nothing written).
 */
export const ABANDON_SCRIPT = `${NOW}
local v = redis.call('GET', KEYS[1])
if v then
  local kind, at, tok = string.match(v, '^(%a):(%d*):?(.*)$')
  if kind then at = ends(at) end
  if at and at > now then
    if kind == 'D' then return 1 end
    if kind == 'L' and tok ~= ARGV[1] then return 0 end
  end
end
redis.call('SET', KEYS[1], 'A:' .. string.format('%.0f', now + tonumber(ARGV[2])) .. ':' .. ARGV[1], 'PX', ARGV[2])
return 1
`;
