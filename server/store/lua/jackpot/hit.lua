-- A hit: a share of a jackpot's meter paid to a player, applied once by its ledger key.
-- KEYS: 1 jackpot hash, 2 jackpot ledger, 3 the key's marker, 4 the jackpot's out hash.
-- ARGV: 1 jackpot name, 2 ledger key, 3 share (basis points of the meter), 4 seed,
--       5 ledger maxlen, 6 marker ttl ms, 7 table, 8 player, 9 transfer id, 10 channel.
-- Pays floor(meter * share / 10000) (the meter's entry 'hit', meter -> account, and the
-- payment waits in the out hash until the player's account has it); a meter left below
-- the seed is topped up to it by the house (an entry 'seed'). Hits are paid in the
-- order this script runs them: a second hit is paid from the meter as the first left it.
-- Returns {1 if applied now else 0, chips paid, meter before, meter after, transfer id,
-- player}: for a key applied before, what it returned then (its player the first's).
--#include jackpot/_start
start(KEYS, ARGV[1], ARGV[4], ARGV[5])
local done = redis.call('GET', KEYS[3])
if done then
  -- Written again as it was: a write, so that the caller's WAIT for replicas covers the
  -- first call's writes too (a retry on another connection would wait for nothing).
  redis.call('SET', KEYS[3], done, 'KEEPTTL')
  local paid, before, after, player, xfer = string.match(done, '^(%d+)|(%d+)|(%d+)|([^|]*)|(.*)$')
  return {0, tonumber(paid), tonumber(before), tonumber(after), xfer, player}
end
local before = tonumber(redis.call('HGET', KEYS[1], 'meter'))
local bps = tonumber(ARGV[3])
-- meter * bps may pass 2^53: split the meter at 10000 so every product stays exact.
local high = math.floor(before / 10000)
local paid = high * bps + math.floor((before - high * 10000) * bps / 10000)
local after = before - paid
local n = 0
if paid > 0 then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[5], '*',
    'key', ARGV[2], 'kind', 'hit', 'player', ARGV[8],
    'amount', string.format('%d', paid), 'source', 'meter', 'dest', 'account',
    'table', ARGV[7], 'xfer', ARGV[9])
  redis.call('HINCRBY', KEYS[1], 'paid', paid)
  redis.call('HINCRBY', KEYS[1], 'hits', 1)
  redis.call('HSET', KEYS[4], ARGV[9],
    ARGV[8] .. '|' .. string.format('%d', paid) .. '|' .. ARGV[2])
  n = n + 1
end
local seed = tonumber(ARGV[4])
if after < seed then
  local top = seed - after
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[5], '*',
    'key', 'seed:' .. ARGV[2], 'kind', 'seed', 'player', '',
    'amount', string.format('%d', top), 'source', 'house', 'dest', 'meter', 'table', ARGV[7])
  redis.call('HINCRBY', KEYS[1], 'seeded', top)
  n = n + 1
  after = seed
end
redis.call('HSET', KEYS[1], 'meter', string.format('%d', after), 'seed', ARGV[4])
redis.call('HINCRBY', KEYS[1], 'n', n)
redis.call('SET', KEYS[3],
  string.format('%d|%d|%d|', paid, before, after) .. ARGV[8] .. '|' .. ARGV[9], 'PX', ARGV[6])
if after ~= before then
  redis.call('PUBLISH', ARGV[10], string.format('%d', after))
end
return {1, paid, before, after, ARGV[9], ARGV[8]}
