--#include accounts/_deliver

-- DELIVER for several players at once (one Redis, not a Cluster: their keys are in
-- several slots). ARGV[1] how many players; then per player, its number of keys
-- and of arguments; then each player's keys and arguments, as DELIVER takes them.
-- Returns each player's DELIVER reply, in order.
local n = tonumber(ARGV[1])
local k, a = 0, 1 + 2 * n
local replies = {}
for p = 1, n do
  local nk, na = tonumber(ARGV[2 * p]), tonumber(ARGV[2 * p + 1])
  replies[p] = deliver({unpack(KEYS, k + 1, k + nk)}, {unpack(ARGV, a + 1, a + na)})
  k, a = k + nk, a + na
end
return replies
