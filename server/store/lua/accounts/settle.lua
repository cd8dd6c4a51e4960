-- Chips reserved for a table that received them: the transfer is over.
-- KEYS[1] the transfer's marker; ARGV[1] ttl ms. Returns what the marker said before.
local marker = redis.call('GET', KEYS[1])
if marker and string.match(marker, '^reserved:') then
  redis.call('SET', KEYS[1], 'settled', 'PX', ARGV[1])
end
return marker or ''
