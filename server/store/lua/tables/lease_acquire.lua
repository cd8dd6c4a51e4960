-- KEYS[1] lease, KEYS[2] fencing counter, KEYS[3] table hash; ARGV[1] owner, ARGV[2]
-- ttl ms. Only a free table is taken: the counter grows only for a real new owner.
-- The new token is also the table hash's fence ('f'): from now on a commit with an
-- older token is refused, and one with this token needs no read of the lease.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return false
end
local token = string.format('%d', redis.call('INCR', KEYS[2]))
redis.call('SET', KEYS[1], token .. ':' .. ARGV[1], 'PX', ARGV[2])
redis.call('HSET', KEYS[3], 'f', token)
return tonumber(token)
