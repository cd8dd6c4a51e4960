-- A wager's contribution to a jackpot's meter, applied once by its ledger key.
-- KEYS: 1 jackpot hash, 2 jackpot ledger, 3 the key's marker.
-- ARGV: 1 jackpot name, 2 ledger key, 3 wager (chips), 4 contribution (basis points of
--       the wager), 5 seed, 6 ledger maxlen, 7 marker ttl ms, 8 table, 9 player,
--       10 channel (the meter is published there when it changes).
-- The meter gains the whole chips of wager * bps / 10000; the part of a chip left over
-- waits in 'frac' (chip-basis-points) until whole chips of it go on the meter, so the
-- meter gains exactly floor(all wagers * bps / 10000) over time, in any order.
-- Returns {1 if applied now else 0, chips put on the meter by this key, meter}.
--#include jackpot/_start
local meter = start(KEYS, ARGV[1], ARGV[5], ARGV[6])
local done = redis.call('GET', KEYS[3])
if done then
  -- Written again as it was: a write, so that the caller's WAIT for replicas covers the
  -- first call's writes too (a retry on another connection would wait for nothing).
  redis.call('SET', KEYS[3], done, 'KEEPTTL')
  return {0, tonumber(done), meter}
end
local units = tonumber(redis.call('HGET', KEYS[1], 'frac')) + tonumber(ARGV[3]) * tonumber(ARGV[4])
local chips = math.floor(units / 10000)
redis.call('HSET', KEYS[1], 'frac', string.format('%d', units - chips * 10000))
if chips > 0 then
  meter = redis.call('HINCRBY', KEYS[1], 'meter', chips)
  redis.call('HINCRBY', KEYS[1], 'contributed', chips)
  redis.call('HINCRBY', KEYS[1], 'n', 1)
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], '*',
    'key', ARGV[2], 'kind', 'contribution', 'player', ARGV[9],
    'amount', string.format('%d', chips), 'source', 'house', 'dest', 'meter',
    'table', ARGV[8])
  redis.call('PUBLISH', ARGV[10], string.format('%d', meter))
end
redis.call('SET', KEYS[3], string.format('%d', chips), 'PX', ARGV[7])
return {1, chips, meter}
