-- The wallet acknowledged the credit at the head of the outbox: it leaves the outbox.
-- An acknowledgement of anything but the head (a late or duplicate answer) changes
-- nothing.
-- KEYS: 1 outbox list, 2 wallet transactions hash.
-- ARGV: 1 transaction id, 2 now (ms).
-- Returns 1 if it was the head, else 0.
if redis.call('LINDEX', KEYS[1], 0) ~= ARGV[1] then
  return 0
end
redis.call('LPOP', KEYS[1])
local found = redis.call('HGET', KEYS[2], ARGV[1])
local amount = string.match(found or '', '^credit|([^|]*)|')
redis.call('HSET', KEYS[2], ARGV[1], 'credit|' .. (amount or '0') .. '|acked|' .. ARGV[2])
return 1
