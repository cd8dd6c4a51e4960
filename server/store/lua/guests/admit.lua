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
