-- What the other nodes learn of a table's stored change, in one call after it.
-- KEYS[1] the table's summary, then the seats set of each player who sat down, then
-- of each who stood up. ARGV[1] table id, ARGV[2] the summary ('' : unchanged),
-- ARGV[3] how many sat down, ARGV[4] how many stood up, then (channel, message) pairs,
-- published in order: the players' private frames before the table's events.
if ARGV[2] ~= '' then
  redis.call('SET', KEYS[1], ARGV[2])
end
local sat = tonumber(ARGV[3])
local stood = tonumber(ARGV[4])
for i = 1, sat do
  redis.call('SADD', KEYS[1 + i], ARGV[1])
end
for i = 1, stood do
  redis.call('SREM', KEYS[1 + sat + i], ARGV[1])
end
for i = 5, #ARGV, 2 do
  redis.call('PUBLISH', ARGV[i], ARGV[i + 1])
end
return 1
