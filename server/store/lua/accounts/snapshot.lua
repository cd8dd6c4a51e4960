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
