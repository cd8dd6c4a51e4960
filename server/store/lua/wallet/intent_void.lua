-- The wallet refused a debit, or cancelled it unapplied: the intent is void (only an
-- open intent of this transaction id).
-- KEYS: 1 intents hash, 2 wallet transactions hash.
-- ARGV: 1 base, 2 transaction id, 3 now (ms).
-- Returns the state before ('' : no intent).
local found = redis.call('HGET', KEYS[1], ARGV[1])
if not found then
  return ''
end
local state, a, amount = string.match(found, '^([^|]*)|([^|]*)|([^|]*)|')
if state ~= 'open' or ARGV[1] .. '-' .. a ~= ARGV[2] then
  return state
end
redis.call('HSET', KEYS[1], ARGV[1], 'void|' .. a .. '|' .. amount .. '|' .. ARGV[3])
redis.call('HSET', KEYS[2], ARGV[2], 'debit|' .. amount .. '|void|' .. ARGV[3])
return 'open'
