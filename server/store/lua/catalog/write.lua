-- One change of one table of the catalog, checked before anything is written, then
-- the catalog's revision grown and the change published (every node reads the
-- catalog again).
--
-- KEYS[1] the catalog hash.
-- ARGV[1] the operation: 'create', 'change', 'close' or 'closed'; ARGV[2] the table
-- id; ARGV[3] its settings (msgpack; create and change only); ARGV[4] the channel.
--
-- Returns {status, revision}: 'OK' (written; or nothing to write: a close of a
-- table already closing, a 'closed' of one already closed), 'EXISTS' (create: the id
-- is taken, by a table of any status), 'MISSING' (no such table), 'CLOSING' or
-- 'CLOSED' (change or close: the table is no longer open), 'OPEN' ('closed' of a
-- table nobody closed).
local op, id = ARGV[1], ARGV[2]
local status = redis.call('HGET', KEYS[1], 's.' .. id)
local rev = tonumber(redis.call('HGET', KEYS[1], 'rev') or '0')

local function written(new_status)
  if new_status then
    redis.call('HSET', KEYS[1], 's.' .. id, new_status)
  end
  rev = redis.call('HINCRBY', KEYS[1], 'rev', 1)
  redis.call('PUBLISH', ARGV[4], id)
  return {'OK', rev}
end

if op == 'create' then
  if status then
    return {'EXISTS', rev}
  end
  redis.call('HSET', KEYS[1], 'c.' .. id, ARGV[3])
  return written('open')
end
if not status then
  return {'MISSING', rev}
end
if op == 'change' then
  if status ~= 'open' then
    return {string.upper(status), rev}
  end
  redis.call('HSET', KEYS[1], 'c.' .. id, ARGV[3])
  return written(nil)
end
if op == 'close' then
  if status == 'closed' then
    return {'CLOSED', rev}
  end
  if status == 'closing' then
    return {'OK', rev}
  end
  return written('closing')
end
if op == 'closed' then
  if status == 'closed' then
    return {'OK', rev}
  end
  if status == 'open' then
    return {'OPEN', rev}
  end
  return written('closed')
end
return redis.error_reply('unknown catalog operation ' .. op)
