-- The request that held a debit's chips is over: they are no longer held (a sweep
-- may then send back what the account still has).
-- KEYS: 1 intents hash, 2 account hash.
-- ARGV: 1 base, 2 transaction id, 3 outcome: 'done' (the table took the chips: a
--       repeat of the request asks the wallet nothing) or 'returned' (the table did
--       not: a retry is a new attempt), 4 now (ms).
-- Returns the state before.
local found = redis.call('HGET', KEYS[1], ARGV[1])
if not found then
  return ''
end
local state, a, amount = string.match(found, '^([^|]*)|([^|]*)|([^|]*)|')
if state ~= 'applied' or ARGV[1] .. '-' .. a ~= ARGV[2] then
  return state
end
redis.call('HINCRBY', KEYS[2], 'wheld', -tonumber(amount))
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3] .. '|' .. a .. '|' .. amount .. '|' .. ARGV[4])
return state
