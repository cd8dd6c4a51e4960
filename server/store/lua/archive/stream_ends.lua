-- KEYS: ledger streams. Returns, for each in turn, its first and its last entry id
-- (false for both: empty or missing); read only. Two ids a stream, where XINFO STREAM
-- answered a map of a dozen fields with both entries whole, which the archiver's pass
-- then parsed for every stream of the node, every pass.
local ends = {}
for i, key in ipairs(KEYS) do
  local first = redis.call('XRANGE', key, '-', '+', 'COUNT', 1)[1]
  local last = redis.call('XREVRANGE', key, '+', '-', 'COUNT', 1)[1]
  ends[2 * i - 1] = first and first[1] or false
  ends[2 * i] = last and last[1] or false
end
return ends
