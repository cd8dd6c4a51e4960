-- The wallet answered that a debit is applied: its chips come into the account from
-- outside, once (only an open intent of this transaction id is applied).
-- KEYS: 1 intents hash, 2 wallet transactions hash, 3 account hash, 4 account ledger.
-- ARGV: 1 base, 2 transaction id, 3 player, 4 ledger maxlen, 5 now (ms),
--       6 'hold' (a request waits for the chips: they stay held for it) or 'release'
--       (recovery: nobody waits, the chips may go back to the wallet).
-- Returns {state before, balance}.
local found = redis.call('HGET', KEYS[1], ARGV[1])
if not found then
  return {'', 0}
end
local state, a, amount = string.match(found, '^([^|]*)|([^|]*)|([^|]*)|')
if state ~= 'open' or ARGV[1] .. '-' .. a ~= ARGV[2] then
  return {state, tonumber(redis.call('HGET', KEYS[3], 'balance') or '0')}
end
local balance = redis.call('HINCRBY', KEYS[3], 'balance', amount)
redis.call('HINCRBY', KEYS[3], 'in', amount)
redis.call('HINCRBY', KEYS[3], 'n', 1)
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[4], '*',
  'key', 'wallet#' .. ARGV[2], 'kind', 'credit', 'player', ARGV[3], 'amount', amount,
  'source', 'outside', 'dest', 'account', 'table', '', 'xfer', ARGV[2])
local next_state = 'released'
if ARGV[6] == 'hold' then
  next_state = 'applied'
  redis.call('HINCRBY', KEYS[3], 'wheld', amount)
end
redis.call('HSET', KEYS[1], ARGV[1], next_state .. '|' .. a .. '|' .. amount .. '|' .. ARGV[5])
redis.call('HSET', KEYS[2], ARGV[2], 'debit|' .. amount .. '|applied|' .. ARGV[5])
return {'open', balance}
