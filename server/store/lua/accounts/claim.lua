-- A money request's claim, and the chips it takes to a table (either or both).
-- KEYS: 1 account hash, 2 account ledger, 3 the claim (or KEYS[1]: no claim),
--       4 the transfer's marker (or KEYS[1]: nothing to reserve).
-- ARGV: 1 player, 2 table id, 3 fingerprint ('' = no claim), 4 claim ttl ms,
--       5 transfer id ('' = nothing to reserve), 6 amount, 7 the table's ledger key
--       of the movement, 8 its kind, 9 ledger maxlen.
-- Replies: {'OK' | 'MINE', balance} (claimed now, or by an earlier attempt of the same
-- request: the caller looks for its record at the table; the chips are reserved);
-- {'REUSED', balance} (the rid was claimed for another request: nothing written);
-- {'INSUFFICIENT', balance, amount} (nothing written); {'FINISHED', balance, marker}
-- (the transfer is settled, refunded or refused already: not to be committed).
local balance = tonumber(redis.call('HGET', KEYS[1], 'balance') or '0')
local mine = false
if ARGV[3] ~= '' then
  local claimed = redis.call('HGET', KEYS[3], 'f')
  if claimed then
    if claimed ~= ARGV[3] then
      return {'REUSED', balance}
    end
    mine = true
  end
end
if ARGV[5] ~= '' then
  local marker = redis.call('GET', KEYS[4])
  if marker then
    local kept = string.match(marker, '^reserved:(%-?%d+)$')
    if not kept then
      return {'FINISHED', balance, marker}
    end
    balance = tonumber(kept)  -- reserved by this very call before: a retry
  else
    local amount = tonumber(ARGV[6])
    if balance < amount then
      return {'INSUFFICIENT', balance, amount}
    end
    balance = redis.call('HINCRBY', KEYS[1], 'balance', -amount)
    redis.call('HINCRBY', KEYS[1], 'n', 1)
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[9], '*',
      'key', ARGV[7] .. '#' .. ARGV[5], 'kind', ARGV[8], 'player', ARGV[1],
      'amount', ARGV[6], 'source', 'account', 'dest', 'table', 'table', ARGV[2],
      'xfer', ARGV[5])
    -- Kept until settled or refunded: the chips are in transit until then.
    redis.call('SET', KEYS[4], 'reserved:' .. string.format('%d', balance))
  end
end
if ARGV[3] ~= '' and not mine then
  redis.call('HSET', KEYS[3], 'f', ARGV[3], 't', ARGV[2])
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
end
if mine then
  return {'MINE', balance}
end
return {'OK', balance}
