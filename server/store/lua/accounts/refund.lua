-- Chips reserved for a table that refused them (its record says void) come back; a
-- transfer never reserved is refused for good, so that a late reservation fails.
-- KEYS: 1 account hash, 2 account ledger, 3 the transfer's marker.
-- ARGV: 1 player, 2 transfer id, 3 amount, 4 table id, 5 ledger maxlen, 6 ttl ms.
-- Returns {what the marker said before ('' : nothing), balance}.
local marker = redis.call('GET', KEYS[3])
local balance = tonumber(redis.call('HGET', KEYS[1], 'balance') or '0')
if not marker then
  redis.call('SET', KEYS[3], 'void', 'PX', ARGV[6])
  return {'', balance}
end
if string.match(marker, '^reserved:') then
  balance = redis.call('HINCRBY', KEYS[1], 'balance', ARGV[3])
  redis.call('HINCRBY', KEYS[1], 'n', 1)
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[5], '*',
    'key', 'refund#' .. ARGV[2], 'kind', 'refund', 'player', ARGV[1], 'amount', ARGV[3],
    'source', 'transit', 'dest', 'account', 'table', ARGV[4], 'xfer', ARGV[2])
  redis.call('SET', KEYS[3], 'refunded', 'PX', ARGV[6])
end
return {marker, balance}
