-- Money from outside into an account.
-- KEYS: 1 account hash, 2 credits hash, 3 account ledger.
-- ARGV: 1 player, 2 amount (>= 0), 3 ledger key, 4 ledger maxlen,
--       5 mode: 'credit' (idempotent by key) or 'guest' (only if no account yet),
--       6 now (ms; a guest account is marked a guest, active now).
-- Returns {1 if applied else 0, balance}.
if ARGV[5] == 'guest' then
  if redis.call('EXISTS', KEYS[1]) == 1 then
    return {0, tonumber(redis.call('HGET', KEYS[1], 'balance') or '0')}
  end
  redis.call('HSET', KEYS[1], 'guest', 1, 'seen', ARGV[6])
elseif redis.call('HEXISTS', KEYS[2], ARGV[3]) == 1 then
  return {0, tonumber(redis.call('HGET', KEYS[1], 'balance') or '0')}
end
local balance = redis.call('HINCRBY', KEYS[1], 'balance', ARGV[2])
if tonumber(ARGV[2]) > 0 then
  local id = redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], '*',
    'key', ARGV[3], 'kind', 'credit', 'player', ARGV[1], 'amount', ARGV[2],
    'source', 'outside', 'dest', 'account', 'table', '')
  redis.call('HINCRBY', KEYS[1], 'in', ARGV[2])
  redis.call('HINCRBY', KEYS[1], 'n', 1)
  if ARGV[5] == 'credit' then
    redis.call('HSET', KEYS[2], ARGV[3], id)
  end
end
return {1, balance}
