"""The Lua scripts of the archive and of guests (module-level strings, as
:mod:`server.store.lua.tables`, whose rules they follow: every key in ``KEYS``, every check
before the first write, numbers formatted with ``%d``).

Each touches one key, or the keys of one player or one table (one hash tag), so that
each runs on one node of a Redis Cluster (but ``STREAM_ENDS``, which only reads, and
reads any streams: on a cluster it is sent the streams of one slot at a time); what
spans owners (the guests' list, the display names) is changed by single-key commands
beside them (docs/DESIGN.md, "Keys ready for Redis Cluster", "The archive", "Guests").
"""

from __future__ import annotations

GUEST_ADMIT = """
-- A new guest, if the limits allow one more this minute.
-- KEYS[1] the minute's counts (hash: every address's field, and one field per address).
-- ARGV: 1 limit in total (0: none), 2 limit per address (0: none), 3 the hash's ttl ms,
--       4 the field of every address, 5 the field of the client's address.
-- Returns 'ok' (counted), or which limit refused it: 'total' or 'address' (nothing
-- written).
local counts = redis.call('HMGET', KEYS[1], ARGV[4], ARGV[5])
local total = tonumber(counts[1] or '0')
local mine = tonumber(counts[2] or '0')
if ARGV[1] ~= '0' and total >= tonumber(ARGV[1]) then
  return 'total'
end
if ARGV[2] ~= '0' and mine >= tonumber(ARGV[2]) then
  return 'address'
end
redis.call('HINCRBY', KEYS[1], ARGV[4], 1)
redis.call('HINCRBY', KEYS[1], ARGV[5], 1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 'ok'
"""

GUEST_TOUCH = """
-- A guest's activity: KEYS[1] the account hash; ARGV[1] now (ms). Only an open guest
-- account is touched, and its last activity only moves forward. Returns 1 if touched.
local found = redis.call('HMGET', KEYS[1], 'guest', 'closed', 'seen')
if found[1] ~= '1' or found[2] then
  return 0
end
if tonumber(found[3] or '0') < tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'seen', ARGV[1])
end
return 1
"""

CLOSE_GUEST = """
-- Close an idle guest's account: its chips go back outside by an entry of its own
-- ledger, its game logs (the archive holds them) go, and a small record stays: the
-- account hash with a zero balance, its 'in', 'out' and 'n' (the audit's totals) and
-- 'closed'. Every key in the player's slot.
-- KEYS: 1 account hash, 2 account ledger, 3 game-log list.
-- ARGV: 1 player, 2 idle before (ms: only a guest whose last activity is older),
--       3 ordinal of the newest game log the archive holds (0: none), 4 ledger maxlen,
--       5 the entry's ledger key, 6 now (ms).
-- Returns {'closed', chips taken out}; else, with nothing written, {'gone', 0} (no
-- account, or closed before), {'member', 0} (not a guest), {'active', last activity},
-- or {'logs', 0} (a game log the archive does not hold yet).
local found = redis.call('HMGET', KEYS[1], 'guest', 'seen', 'closed', 'balance')
if redis.call('EXISTS', KEYS[1]) == 0 or found[3] then
  return {'gone', 0}
end
if found[1] ~= '1' then
  return {'member', 0}
end
local seen = tonumber(found[2] or '0')
if seen >= tonumber(ARGV[2]) then
  return {'active', seen}
end
local head = redis.call('LINDEX', KEYS[3], 0)
local newest = 0
if head then
  newest = struct.unpack('>I8', head)
end
if newest ~= tonumber(ARGV[3]) then
  return {'logs', 0}
end
local balance = tonumber(found[4] or '0')
if balance ~= 0 then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*',
    'key', ARGV[5], 'kind', 'close', 'player', ARGV[1],
    'amount', string.format('%d', balance), 'source', 'account', 'dest', 'outside',
    'table', '')
  redis.call('HINCRBY', KEYS[1], 'out', balance)
  redis.call('HINCRBY', KEYS[1], 'n', 1)
  redis.call('HSET', KEYS[1], 'balance', 0)
end
redis.call('HSET', KEYS[1], 'closed', ARGV[6])
redis.call('HDEL', KEYS[1], 'seen')
redis.call('DEL', KEYS[3])
return {'closed', balance}
"""

DROP_CLOSED_LEDGER = """
-- KEYS[1] an account hash, KEYS[2] its ledger. The ledger of a closed account, once
-- the archive holds all of it (empty in Redis), is deleted. Returns 1 if it was.
if redis.call('HEXISTS', KEYS[1], 'closed') == 1 and redis.call('XLEN', KEYS[2]) == 0 then
  return redis.call('DEL', KEYS[2])
end
return 0
"""

TRIM_LOG = """
-- KEYS[1] a game-log list (newest first, each record behind its 8-byte ordinal);
-- ARGV[1] an ordinal. Removes from the tail (the oldest end) every record numbered up
-- to it, never the newest: the next record's ordinal follows the newest one's. Run
-- after the archive stored those records; running it again removes nothing more.
-- Returns how many records it removed.
local through = tonumber(ARGV[1])
local removed = 0
while redis.call('LLEN', KEYS[1]) > 1 do
  local tail = redis.call('LINDEX', KEYS[1], -1)
  if struct.unpack('>I8', tail) > through then
    break
  end
  redis.call('RPOP', KEYS[1])
  removed = removed + 1
end
return removed
"""

STREAM_ENDS = """
-- KEYS: ledger streams. Returns, for each in turn, its first and its last entry id
-- (false for both: empty or missing); read only. Two ids a stream, where XINFO STREAM
-- answered a map of a dozen fields with both entries whole, which the archiver's pass
-- then parsed for every stream of the node, every pass.
local ends = {}
for i, key in ipairs(KEYS) do
  local first = redis.call('XRANGE', key, '-', '+', 'COUNT', 1)[1]
  local last = redis.call('XREVRANGE', key, '+', '-', 'COUNT', 1)[1]
  ends[2 * i - 1] = first and first[1] or false
  ends[2 * i] = last and last[1] or false
end
return ends
"""

LEDGER_START = """
-- Where the archive starts a ledger stream: KEYS[1] its owner's hash (a table's or an
-- account's), KEYS[2] the stream. Returns, as of one instant, {entries ever appended
-- (the owner's 'n'), entries in the stream, the stream's last id ('' : none), the
-- owner's hash (HGETALL)}.
local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)[1]
return {tonumber(redis.call('HGET', KEYS[1], 'n') or '0'), redis.call('XLEN', KEYS[2]),
  last and last[1] or '', redis.call('HGETALL', KEYS[1])}
"""
