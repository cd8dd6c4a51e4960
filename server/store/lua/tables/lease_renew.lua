-- KEYS[i], KEYS[n + i], KEYS[2n + i]: the lease, fencing counter and table hash of
-- table i of n; ARGV[i] its '<token>:<owner>'; ARGV[n + 1] ttl ms.
-- One call renews every lease of a process: a list, 1 where the lease is still ours
-- (and is extended), 0 where it is not. A lease that ran out while nobody took the
-- table since (the counter still at our token, the fence still ours: not released)
-- is ours again: a renewal sent late by a busy process no longer loses its tables.
local n = #KEYS / 3
local ttl = ARGV[n + 1]
local out = {}
for i = 1, n do
  local held = redis.call('GET', KEYS[i])
  if held == ARGV[i] then
    redis.call('PEXPIRE', KEYS[i], ttl)
    out[i] = 1
  else
    out[i] = 0
    if not held then
      local token = string.match(ARGV[i], '^(%d+):')
      if redis.call('GET', KEYS[n + i]) == token
          and redis.call('HGET', KEYS[2 * n + i], 'f') == token then
        redis.call('SET', KEYS[i], ARGV[i], 'PX', ttl)
        out[i] = 1
      end
    end
  end
end
return out
