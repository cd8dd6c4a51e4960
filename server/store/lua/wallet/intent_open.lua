-- Write (or find) the intent of a debit of the wallet, before the wallet is asked.
-- KEYS: 1 intents hash, 2 wallet transactions hash, 3 account hash.
-- ARGV: 1 the request's base (digest), 2 amount, 3 now (ms).
-- The transaction id is <base>-<attempt>: the same while the intent is open or
-- applied, a new one only after an attempt that was void or whose chips went back.
-- Returns {state, transaction id, amount}: 'open' (ask the wallet, again if it was
-- open), 'applied' (in the account already, held), 'done' (the request used it), or
-- 'other' with the amount first asked (another amount under the same request), or
-- 'guest' (a guest's account: its chips are this server's, the wallet is not asked).
if redis.call('HGET', KEYS[3], 'guest') == '1' then
  return {'guest', '', 0}
end
local found = redis.call('HGET', KEYS[1], ARGV[1])
local attempt = 1
if found then
  local state, a, amount = string.match(found, '^([^|]*)|([^|]*)|([^|]*)|')
  attempt = tonumber(a)
  local txid = ARGV[1] .. '-' .. string.format('%d', attempt)
  if amount ~= ARGV[2] and (state == 'open' or state == 'applied' or state == 'done') then
    return {'other', txid, amount}
  end
  if state == 'open' then
    redis.call('HSET', KEYS[1], ARGV[1], 'open|' .. a .. '|' .. amount .. '|' .. ARGV[3])
    return {'open', txid, amount}
  end
  if state == 'applied' or state == 'done' then
    return {state, txid, amount}
  end
  attempt = attempt + 1 -- void, returned or released: a new attempt
end
local txid = ARGV[1] .. '-' .. string.format('%d', attempt)
redis.call('HSET', KEYS[1], ARGV[1],
  'open|' .. string.format('%d', attempt) .. '|' .. ARGV[2] .. '|' .. ARGV[3])
redis.call('HSET', KEYS[2], txid, 'debit|' .. ARGV[2] .. '|open|' .. ARGV[3])
return {'open', txid, ARGV[2]}
