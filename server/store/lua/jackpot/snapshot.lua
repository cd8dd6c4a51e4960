-- The audit's reading of one jackpot, as of one instant.
-- KEYS: 1 jackpot hash, 2 the jackpot's out hash, 3 the jackpot's ledger.
-- Returns {the hash's fields and values, the out hash's, the ledger's last id or ''}.
-- A ledger the archiver emptied answers the last id it ever had: the audit replays the
-- archive up to it.
local last = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)
local id = ''
if last[1] then
  id = last[1][1]
elseif redis.call('EXISTS', KEYS[3]) == 1 then
  local info = redis.call('XINFO', 'STREAM', KEYS[3])
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then
      id = info[i + 1]
    end
  end
end
return {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), id}
