-- Transfers finished on both sides, and game logs delivered: forgotten by the table.
-- KEYS: 1 transfers in, 2 transfers out, 3 logs out. ARGV: 1 #in, 2 #out, then the
-- ids of each, in that order (the rest are logs).
-- One HDEL per hash.
local n_in = tonumber(ARGV[1])
local n_out = tonumber(ARGV[2])
if n_in > 0 then
  redis.call('HDEL', KEYS[1], unpack(ARGV, 3, 2 + n_in))
end
if n_out > 0 then
  redis.call('HDEL', KEYS[2], unpack(ARGV, 3 + n_in, 2 + n_in + n_out))
end
if #ARGV > 2 + n_in + n_out then
  redis.call('HDEL', KEYS[3], unpack(ARGV, 3 + n_in + n_out, #ARGV))
end
return 1
