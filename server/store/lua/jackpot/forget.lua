-- Forget hits their players' accounts have (delivered: the account's marker says so).
-- KEYS: 1 the jackpot's out hash. ARGV: the transfer ids. Returns how many it dropped.
return redis.call('HDEL', KEYS[1], unpack(ARGV))
