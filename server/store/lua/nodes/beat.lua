-- A node's heartbeat, and the live nodes.
-- KEYS[1] the nodes sorted set (member: instance, score: when it expires, ms),
-- KEYS[2] the node's hash. ARGV[1] the instance ('' : only read), ARGV[2] ttl ms,
-- ARGV[3..] field, value pairs for the node's hash.
-- Forgets the nodes whose registration ran out (by Redis's clock), renews this one's,
-- and returns {now, instance, expires, instance, expires, ...} of the live nodes.
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now))
if ARGV[1] ~= '' then
  local ttl = tonumber(ARGV[2])
  redis.call('ZADD', KEYS[1], string.format('%d', now + ttl), ARGV[1])
  if #ARGV > 2 then
    redis.call('HSET', KEYS[2], unpack(ARGV, 3))
  end
  redis.call('PEXPIRE', KEYS[2], ttl)
end
local live = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
table.insert(live, 1, string.format('%d', now))
return live
