-- Switch stored formats on, if every live node reads them (server/store/nodes/formats.py).
-- KEYS[1] the nodes sorted set (member: instance, score: when it expires, ms),
-- KEYS[2] the set of formats switched on, KEYS[3..] the hash of each live instance as
-- the caller read them, in the order of ARGV[2..1+n].
-- ARGV[1] n, the number of instances; ARGV[2..1+n] the instances (sorted); ARGV[2+n..]
-- the formats to switch on.
-- The live nodes (by Redis's clock) must be exactly the instances named, and each one's
-- hash must list every format in its field 'reads' (comma-separated; a node that
-- announced nothing reads none of them); else nothing is written. Returns
-- {status, format, format, ...}: status 'ok' (switched on) or 'changed' (nothing
-- written), then every format switched on.
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = tonumber(ARGV[1])
local live = redis.call('ZRANGEBYSCORE', KEYS[1], string.format('(%d', now), '+inf')
table.sort(live)
local status = 'ok'
if #live ~= n then
  status = 'changed'
else
  for i = 1, n do
    if live[i] ~= ARGV[1 + i] then
      status = 'changed'
      break
    end
  end
end
if status == 'ok' then
  for i = 1, n do
    local reads = {}
    local listed = redis.call('HGET', KEYS[2 + i], 'reads')
    if listed then
      for name in string.gmatch(listed, '[^,]+') do
        reads[name] = true
      end
    end
    for j = 2 + n, #ARGV do
      if not reads[ARGV[j]] then
        status = 'changed'
      end
    end
  end
end
if status == 'ok' and #ARGV > 1 + n then
  redis.call('SADD', KEYS[2], unpack(ARGV, 2 + n))
end
local on = redis.call('SMEMBERS', KEYS[2])
table.insert(on, 1, status)
return on
