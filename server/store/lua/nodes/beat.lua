-- A node's heartbeat, and the live nodes.
-- KEYS[1] the nodes sorted set (member: instance, score: when it expires, ms),
-- KEYS[2] the node's hash, KEYS[3] its name's holder (string: an instance).
-- ARGV[1] the instance ('' : only read), ARGV[2] ttl ms, ARGV[3] what to do with the
-- name: 'take' (a process starting: it holds the name from now, and the instance that
-- held it, an earlier life, is no longer a live node), 'renew' (refused if another
-- instance took the name), '' (no name); ARGV[4..] field, value pairs for the hash.
-- Forgets the nodes whose registration ran out (by Redis's clock), renews this one's,
-- and returns {now, status, set_aside, instance, expires, instance, expires, ...} of
-- the live nodes: status 'ok', or 'refused' (the name is another instance's: nothing
-- written); set_aside the earlier instance a 'take' unregistered, or ''.
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now))
local status, aside = 'ok', ''
if ARGV[1] ~= '' then
  local ttl = tonumber(ARGV[2])
  if ARGV[3] ~= '' then
    local holder = redis.call('GET', KEYS[3])
    if holder and holder ~= ARGV[1] then
      if ARGV[3] == 'take' then
        if redis.call('ZREM', KEYS[1], holder) == 1 then
          aside = holder
        end
      else
        status = 'refused'
      end
    end
  end
  if status == 'ok' then
    if ARGV[3] ~= '' then
      redis.call('SET', KEYS[3], ARGV[1], 'PX', string.format('%d', ttl))
    end
    redis.call('ZADD', KEYS[1], string.format('%d', now + ttl), ARGV[1])
    if #ARGV > 3 then
      redis.call('HSET', KEYS[2], unpack(ARGV, 4))
    end
    redis.call('PEXPIRE', KEYS[2], ttl)
  end
end
local live = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
table.insert(live, 1, aside)
table.insert(live, 1, status)
table.insert(live, 1, string.format('%d', now))
return live
