-- KEYS[1] lease, KEYS[2] table hash; ARGV[1] '<token>:<owner>'. Deletes only our own
-- lease, and its fence, so that a renewal still on its way cannot take the lease back:
-- also when the lease ran out already (1 only if it was still there). A fence still
-- at our token with no lease means nobody took the table since (a taking writes it).
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('HDEL', KEYS[2], 'f')
  return 1
end
if not held and redis.call('HGET', KEYS[2], 'f') == string.match(ARGV[1], '^(%d+):') then
  redis.call('HDEL', KEYS[2], 'f')
end
return 0
