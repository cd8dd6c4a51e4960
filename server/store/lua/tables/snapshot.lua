-- A table's money as of one instant: its hash, its transfers in and out, and the id
-- of its ledger's last entry ('' : none).
-- KEYS: 1 table hash, 2 transfers in, 3 transfers out, 4 table ledger.
local last = redis.call('XREVRANGE', KEYS[4], '+', '-', 'COUNT', 1)[1]
return {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]),
  redis.call('HGETALL', KEYS[3]), last and last[1] or ''}
