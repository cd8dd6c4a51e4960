-- The catalog's first tables, from a tables file: written only if the catalog does
-- not exist yet (a store's first start, or the first start of a version with a
-- catalog over a store that had none), so a file never overrides what operators
-- changed since.
--
-- KEYS[1] the catalog hash.
-- ARGV[1] the catalog's channel, ARGV[2] the time (ms); then pairs: table id, its
-- settings (msgpack).
-- Returns 1 if seeded, 0 if the catalog existed (nothing written).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
for i = 3, #ARGV, 2 do
  redis.call('HSET', KEYS[1], 'c.' .. ARGV[i], ARGV[i + 1], 's.' .. ARGV[i], 'open')
end
redis.call('HSET', KEYS[1], 'rev', 1, 'seeded', ARGV[2])
redis.call('PUBLISH', ARGV[1], '')
return 1
