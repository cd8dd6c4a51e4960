-- The audit's reading of one jackpot, as of one instant.
-- KEYS: 1 jackpot hash, 2 the jackpot's out hash, 3 the jackpot's ledger.
-- Returns {the hash's fields and values, the out hash's, the ledger's last id or ''}.
local last = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)
local id = ''
if last[1] then
  id = last[1][1]
end
return {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), id}
