-- Start a jackpot's meter at its seed, once: the house puts the seed on the meter (a
-- ledger entry 'seed', house -> meter), so the meter holds no chip the ledger lacks.
-- K: 1 jackpot hash, 2 jackpot ledger. name: the jackpot; seed: chips; maxlen: the
-- ledger's bound. Returns the meter.
local function start(K, name, seed, maxlen)
  local meter = redis.call('HGET', K[1], 'meter')
  if meter then
    return tonumber(meter)
  end
  redis.call('HSET', K[1], 'meter', seed, 'seed', seed, 'frac', 0, 'seeded', seed,
    'contributed', 0, 'paid', 0, 'hits', 0, 'n', 0)
  if tonumber(seed) > 0 then
    redis.call('XADD', K[2], 'MAXLEN', '~', maxlen, '*',
      'key', 'seed:' .. name .. ':0', 'kind', 'seed', 'player', '', 'amount', seed,
      'source', 'house', 'dest', 'meter', 'table', '')
    redis.call('HSET', K[1], 'n', 1)
  end
  return tonumber(seed)
end
