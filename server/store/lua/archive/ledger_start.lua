-- Where the archive starts a ledger stream: KEYS[1] its owner's hash (a table's or an
-- account's), KEYS[2] the stream. Returns, as of one instant, {entries ever appended
-- (the owner's 'n'), entries in the stream, the stream's last id ('' : none), the
-- owner's hash (HGETALL)}.
local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)[1]
return {tonumber(redis.call('HGET', KEYS[1], 'n') or '0'), redis.call('XLEN', KEYS[2]),
  last and last[1] or '', redis.call('HGETALL', KEYS[1])}
