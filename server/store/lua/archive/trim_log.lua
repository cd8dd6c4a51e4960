-- KEYS[1] a game-log list (newest first, each record behind its 8-byte ordinal);
-- ARGV[1] an ordinal. Removes from the tail (the oldest end) every record numbered up
-- to it, never the newest: the next record's ordinal follows the newest one's. Run
-- after the archive stored those records; running it again removes nothing more.
-- Returns how many records it removed.
local through = tonumber(ARGV[1])
local removed = 0
while redis.call('LLEN', KEYS[1]) > 1 do
  local tail = redis.call('LINDEX', KEYS[1], -1)
  if struct.unpack('>I8', tail) > through then
    break
  end
  redis.call('RPOP', KEYS[1])
  removed = removed + 1
end
return removed
