-- Refuse transfers from accounts that the table has not received: once void, no
-- commit can take them, so their chips may go back to the accounts.
-- KEYS[1] transfers in; ARGV the transfer ids. Returns each one's record as it was
-- ('' : none), an open one now void.
local out = {}
for i = 1, #ARGV do
  local have = redis.call('HGET', KEYS[1], ARGV[i])
  out[i] = have or ''
  if have and string.sub(have, 1, 5) == 'open:' then
    redis.call('HSET', KEYS[1], ARGV[i], 'void' .. string.sub(have, 5))
  end
end
return out
