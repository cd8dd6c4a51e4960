-- KEYS[1] a game-log list (newest first, ordinals contiguous from the head down);
-- ARGV[1] cursor (0 = newest; else return ordinals below it), ARGV[2] count.
local head = redis.call('LINDEX', KEYS[1], 0)
if not head then
  return {}
end
local start = 0
local cursor = tonumber(ARGV[1])
if cursor > 0 then
  -- The item with ordinal o is at index (head ordinal - o).
  start = struct.unpack('>I8', head) - cursor + 1
  if start < 0 then start = 0 end
end
return redis.call('LRANGE', KEYS[1], start, start + tonumber(ARGV[2]) - 1)
