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
