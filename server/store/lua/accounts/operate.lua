-- An operator's move on an account: a credit from outside, a debit back outside, or
-- the reversal of a credit (a debit of the credit's amount, once per credit). Each is
-- applied at most once per idempotency key: the key's record keeps what was asked (a
-- fingerprint) and what came of it, so a repeat gets the first result and moves
-- nothing, and the same key with another request is refused. Every check before the
-- first write. The ledger key of its entry is `op:<key>`.
-- KEYS: 1 account hash, 2 credits hash (the keys' records), 3 account ledger,
--       4 reversals hash (credit id -> its reversal's id).
-- ARGV: 1 player, 2 kind: 'credit', 'debit' or 'reversal', 3 amount (> 0; a
--       reversal's is the credit's), 4 idempotency key, 5 fingerprint of the request,
--       6 reason, 7 by (who asked), 8 create ('1': a credit may open the account),
--       9 ledger maxlen, 10 the credit's ledger id (a reversal).
-- Returns {status, balance, ledger id, amount}: status 'applied' or 'repeat' (the
-- key's first result), else, nothing written: 'conflict' (the key was used for
-- another request), 'unknown' (no account), 'closed' (a closed guest's),
-- 'insufficient' (balance below the amount; balance given), 'no_entry' (no such
-- entry in the ledger in Redis), 'not_credit' (the entry is not a credit from
-- outside), 'reversed' (reversed before; the reversal's id given).
local record = redis.call('HGET', KEYS[2], ARGV[4])
if record then
  local fp, id, balance, amount = string.match(record, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
  if fp == nil then
    -- A credit keyed before records held more than its ledger id: the same key is the
    -- same credit.
    if ARGV[2] == 'credit' then
      return {'repeat', tonumber(redis.call('HGET', KEYS[1], 'balance') or '0'), record, 0}
    end
    return {'conflict', 0, record, 0}
  end
  if fp ~= ARGV[5] then
    return {'conflict', 0, id, 0}
  end
  return {'repeat', tonumber(balance), id, tonumber(amount)}
end
local found = redis.call('HMGET', KEYS[1], 'balance', 'closed')
if redis.call('EXISTS', KEYS[1]) == 0 then
  if not (ARGV[2] == 'credit' and ARGV[8] == '1') then
    return {'unknown', 0, '', 0}
  end
elseif found[2] then
  return {'closed', 0, '', 0}
end
local balance = tonumber(found[1] or '0')
local amount = tonumber(ARGV[3])
if ARGV[2] == 'reversal' then
  if redis.call('HEXISTS', KEYS[4], ARGV[10]) == 1 then
    return {'reversed', balance, redis.call('HGET', KEYS[4], ARGV[10]), 0}
  end
  local entry = redis.call('XRANGE', KEYS[3], ARGV[10], ARGV[10])[1]
  if not entry then
    return {'no_entry', balance, '', 0}
  end
  local fields = {}
  for i = 1, #entry[2], 2 do
    fields[entry[2][i]] = entry[2][i + 1]
  end
  if fields['kind'] ~= 'credit' or fields['source'] ~= 'outside' then
    return {'not_credit', balance, '', 0}
  end
  amount = tonumber(fields['amount'])
end
if ARGV[2] ~= 'credit' and balance < amount then
  return {'insufficient', balance, '', amount}
end
local text = string.format('%d', amount)
local id
if ARGV[2] == 'credit' then
  balance = redis.call('HINCRBY', KEYS[1], 'balance', text)
  id = redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[9], '*',
    'key', 'op:' .. ARGV[4], 'kind', 'credit', 'player', ARGV[1], 'amount', text,
    'source', 'outside', 'dest', 'account', 'table', '', 'reason', ARGV[6], 'by', ARGV[7])
  redis.call('HINCRBY', KEYS[1], 'in', text)
else
  balance = redis.call('HINCRBY', KEYS[1], 'balance', '-' .. text)
  if ARGV[2] == 'reversal' then
    id = redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[9], '*',
      'key', 'op:' .. ARGV[4], 'kind', 'reversal', 'player', ARGV[1], 'amount', text,
      'source', 'account', 'dest', 'outside', 'table', '', 'reason', ARGV[6], 'by', ARGV[7],
      'reverses', ARGV[10])
    redis.call('HSET', KEYS[4], ARGV[10], id)
  else
    id = redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[9], '*',
      'key', 'op:' .. ARGV[4], 'kind', 'debit', 'player', ARGV[1], 'amount', text,
      'source', 'account', 'dest', 'outside', 'table', '', 'reason', ARGV[6], 'by', ARGV[7])
  end
  redis.call('HINCRBY', KEYS[1], 'out', text)
end
redis.call('HINCRBY', KEYS[1], 'n', 1)
redis.call('HSET', KEYS[2], ARGV[4],
  ARGV[5] .. '|' .. id .. '|' .. string.format('%d', balance) .. '|' .. text)
return {'applied', balance, id, amount}
