"""The Lua scripts of an account, every key in the player's slot (module-level strings,
as :mod:`server.store.lua.tables`, whose rules they follow: every key in ``KEYS``, every
check before the first write, numbers formatted with ``%d``).

Chips enter an account from outside (``CREDIT``), leave it for a table (``CLAIM``
reserves them), come back when a table refused them (``REFUND``) or when a table pays
out (``DELIVER``). Each of these is idempotent by its transfer id: the account keeps
what it did with a transfer in a marker key, so a call made again (a retry, a
recovery) changes nothing (docs/DESIGN.md, "Keys ready for Redis Cluster"). A game log
is delivered once by its record: a round's record is unique, and one delivered before
is among the player's newest (:data:`LOG_WINDOW` of them).
"""

from __future__ import annotations

LOG_WINDOW = 50
"""How many of a player's newest game logs ``DELIVER`` looks through for the one it
delivers: a log delivered again (its table's holder died before forgetting it) comes
within seconds, well before that many other rounds."""

CREDIT = """
-- Money from outside into an account.
-- KEYS: 1 account hash, 2 credits hash, 3 account ledger.
-- ARGV: 1 player, 2 amount (>= 0), 3 ledger key, 4 ledger maxlen,
--       5 mode: 'credit' (idempotent by key) or 'guest' (only if no account yet),
--       6 now (ms; a guest account is marked a guest, active now).
-- Returns {1 if applied else 0, balance}.
if ARGV[5] == 'guest' then
  if redis.call('EXISTS', KEYS[1]) == 1 then
    return {0, tonumber(redis.call('HGET', KEYS[1], 'balance') or '0')}
  end
  redis.call('HSET', KEYS[1], 'guest', 1, 'seen', ARGV[6])
elseif redis.call('HEXISTS', KEYS[2], ARGV[3]) == 1 then
  return {0, tonumber(redis.call('HGET', KEYS[1], 'balance') or '0')}
end
local balance = redis.call('HINCRBY', KEYS[1], 'balance', ARGV[2])
if tonumber(ARGV[2]) > 0 then
  local id = redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], '*',
    'key', ARGV[3], 'kind', 'credit', 'player', ARGV[1], 'amount', ARGV[2],
    'source', 'outside', 'dest', 'account', 'table', '')
  redis.call('HINCRBY', KEYS[1], 'in', ARGV[2])
  redis.call('HINCRBY', KEYS[1], 'n', 1)
  if ARGV[5] == 'credit' then
    redis.call('HSET', KEYS[2], ARGV[3], id)
  end
end
return {1, balance}
"""

CLAIM = """
-- A money request's claim, and the chips it takes to a table (either or both).
-- KEYS: 1 account hash, 2 account ledger, 3 the claim (or KEYS[1]: no claim),
--       4 the transfer's marker (or KEYS[1]: nothing to reserve).
-- ARGV: 1 player, 2 table id, 3 fingerprint ('' = no claim), 4 claim ttl ms,
--       5 transfer id ('' = nothing to reserve), 6 amount, 7 the table's ledger key
--       of the movement, 8 its kind, 9 ledger maxlen.
-- Replies: {'OK' | 'MINE', balance} (claimed now, or by an earlier attempt of the same
-- request: the caller looks for its record at the table; the chips are reserved);
-- {'REUSED', balance} (the rid was claimed for another request: nothing written);
-- {'INSUFFICIENT', balance, amount} (nothing written); {'FINISHED', balance, marker}
-- (the transfer is settled, refunded or refused already: not to be committed).
local balance = tonumber(redis.call('HGET', KEYS[1], 'balance') or '0')
local mine = false
if ARGV[3] ~= '' then
  local claimed = redis.call('HGET', KEYS[3], 'f')
  if claimed then
    if claimed ~= ARGV[3] then
      return {'REUSED', balance}
    end
    mine = true
  end
end
if ARGV[5] ~= '' then
  local marker = redis.call('GET', KEYS[4])
  if marker then
    local kept = string.match(marker, '^reserved:(%-?%d+)$')
    if not kept then
      return {'FINISHED', balance, marker}
    end
    balance = tonumber(kept)  -- reserved by this very call before: a retry
  else
    local amount = tonumber(ARGV[6])
    if balance < amount then
      return {'INSUFFICIENT', balance, amount}
    end
    balance = redis.call('HINCRBY', KEYS[1], 'balance', -amount)
    redis.call('HINCRBY', KEYS[1], 'n', 1)
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[9], '*',
      'key', ARGV[7] .. '#' .. ARGV[5], 'kind', ARGV[8], 'player', ARGV[1],
      'amount', ARGV[6], 'source', 'account', 'dest', 'table', 'table', ARGV[2],
      'xfer', ARGV[5])
    -- Kept until settled or refunded: the chips are in transit until then.
    redis.call('SET', KEYS[4], 'reserved:' .. string.format('%d', balance))
  end
end
if ARGV[3] ~= '' and not mine then
  redis.call('HSET', KEYS[3], 'f', ARGV[3], 't', ARGV[2])
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
end
if mine then
  return {'MINE', balance}
end
return {'OK', balance}
"""

REFUND = """
-- Chips reserved for a table that refused them (its record says void) come back; a
-- transfer never reserved is refused for good, so that a late reservation fails.
-- KEYS: 1 account hash, 2 account ledger, 3 the transfer's marker.
-- ARGV: 1 player, 2 transfer id, 3 amount, 4 table id, 5 ledger maxlen, 6 ttl ms.
-- Returns {what the marker said before ('' : nothing), balance}.
local marker = redis.call('GET', KEYS[3])
local balance = tonumber(redis.call('HGET', KEYS[1], 'balance') or '0')
if not marker then
  redis.call('SET', KEYS[3], 'void', 'PX', ARGV[6])
  return {'', balance}
end
if string.match(marker, '^reserved:') then
  balance = redis.call('HINCRBY', KEYS[1], 'balance', ARGV[3])
  redis.call('HINCRBY', KEYS[1], 'n', 1)
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[5], '*',
    'key', 'refund#' .. ARGV[2], 'kind', 'refund', 'player', ARGV[1], 'amount', ARGV[3],
    'source', 'transit', 'dest', 'account', 'table', ARGV[4], 'xfer', ARGV[2])
  redis.call('SET', KEYS[3], 'refunded', 'PX', ARGV[6])
end
return {marker, balance}
"""

SETTLE = """
-- Chips reserved for a table that received them: the transfer is over.
-- KEYS[1] the transfer's marker; ARGV[1] ttl ms. Returns what the marker said before.
local marker = redis.call('GET', KEYS[1])
if marker and string.match(marker, '^reserved:') then
  redis.call('SET', KEYS[1], 'settled', 'PX', ARGV[1])
end
return marker or ''
"""

_DELIVER_ONE = """
-- What tables send a player: chips (their transfers out) and game logs, each once.
-- KEYS: 1 account hash, 2 account ledger, 3 game-log list, then one key per item: the
--       transfer's marker (chips), or KEYS[3] again (a game log: its record is its id).
-- ARGV: 1 player, 2 table id, 3 ledger maxlen, 4 ttl ms, 5 log cap, 6 how many of the
--       newest game logs to look through for a log delivered before, then 5 per item
--       (transfer id, kind ('log' for a game log), amount, ledger key, record).
-- Returns the balance after the item that moved chips, per item (0 for a log): as
-- the first delivery left it, for an item delivered before.
local function deliver(K, A)
  local out = {}
  local base = 6
  local n = (#A - base) / 5
  for i = 1, n do
    local b = base + 5 * (i - 1)
    if A[b + 2] == 'log' then
      -- A round's record is unique (table, round, cards): one among the newest is this
      -- one, delivered before. (A marker per log would cost a key per player and round.)
      local newest = redis.call('LRANGE', K[3], 0, tonumber(A[6]) - 1)
      local seen = false
      for _, item in ipairs(newest) do
        if string.sub(item, 9) == A[b + 5] then
          seen = true
          break
        end
      end
      if not seen then
        local ordinal = 1
        if newest[1] then
          ordinal = struct.unpack('>I8', newest[1]) + 1  -- the head's, plus one
        end
        local length = redis.call('LPUSH', K[3], struct.pack('>I8', ordinal) .. A[b + 5])
        if length > tonumber(A[5]) then
          redis.call('LTRIM', K[3], 0, tonumber(A[5]) - 1)
        end
      end
      out[i] = 0
    else
      local marker = K[3 + i]
      local done = redis.call('GET', marker)
      if done then
        out[i] = tonumber(string.match(done, '^applied:(%-?%d+)$') or '0')
      else
        local balance = redis.call('HINCRBY', K[1], 'balance', A[b + 3])
        redis.call('HINCRBY', K[1], 'n', 1)
        redis.call('XADD', K[2], 'MAXLEN', '~', A[3], '*',
          'key', A[b + 4], 'kind', A[b + 2], 'player', A[1], 'amount', A[b + 3],
          'source', 'table', 'dest', 'account', 'table', A[2], 'xfer', A[b + 1])
        redis.call('SET', marker, 'applied:' .. string.format('%d', balance), 'PX', A[4])
        out[i] = balance
      end
    end
  end
  return out
end
"""

DELIVER = _DELIVER_ONE + "return deliver(KEYS, ARGV)\n"

DELIVER_MANY = (
    _DELIVER_ONE
    + """
-- DELIVER for several players at once (one Redis, not a Cluster: their keys are in
-- several slots). ARGV[1] how many players; then per player, its number of keys
-- and of arguments; then each player's keys and arguments, as DELIVER takes them.
-- Returns each player's DELIVER reply, in order.
local n = tonumber(ARGV[1])
local k, a = 0, 1 + 2 * n
local replies = {}
for p = 1, n do
  local nk, na = tonumber(ARGV[2 * p]), tonumber(ARGV[2 * p + 1])
  replies[p] = deliver({unpack(KEYS, k + 1, k + nk)}, {unpack(ARGV, a + 1, a + na)})
  k, a = k + nk, a + na
end
return replies
"""
)

ACCOUNT_SNAPSHOT = """
-- An account's money as of one instant, and what it did with some transfers.
-- KEYS: 1 account hash, 2 account ledger, then one transfer marker each.
-- Returns {balance, in, n, out, the ledger's last id ('' : none), marker per transfer
-- ('' : none)}.
local out = redis.call('HMGET', KEYS[1], 'balance', 'in', 'n', 'out')
local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)[1]
out[5] = last and last[1] or ''
for i = 3, #KEYS do
  out[#out + 1] = redis.call('GET', KEYS[i]) or ''
end
return out
"""
