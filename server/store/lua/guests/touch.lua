-- A guest's activity: KEYS[1] the account hash; ARGV[1] now (ms). Only an open guest
-- account is touched, and its last activity only moves forward. Returns 1 if touched.
local found = redis.call('HMGET', KEYS[1], 'guest', 'closed', 'seen')
if found[1] ~= '1' or found[2] then
  return 0
end
if tonumber(found[3] or '0') < tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'seen', ARGV[1])
end
return 1
