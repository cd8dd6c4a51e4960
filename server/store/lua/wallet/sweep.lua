-- Send the chips an account holds, and no request holds, back to the wallet: one
-- credit queued in the player's outbox, its transaction id <prefix>-<n> from the
-- account's own counter, so that it is made once and retried under the same id.
-- A guest's account is never swept (a guest's chips are not the wallet's).
-- KEYS: 1 account hash, 2 account ledger, 3 wallet transactions hash, 4 outbox list.
-- ARGV: 1 player, 2 transaction id prefix, 3 ledger maxlen, 4 now (ms).
-- Returns {amount queued (0: none), transaction id}.
local found = redis.call('HMGET', KEYS[1], 'balance', 'wheld', 'guest', 'closed')
if found[3] == '1' or found[4] then
  return {0, ''}
end
local amount = tonumber(found[1] or '0') - tonumber(found[2] or '0')
if amount <= 0 then
  return {0, ''}
end
local n = redis.call('HINCRBY', KEYS[1], 'wseq', 1)
local txid = ARGV[2] .. '-' .. string.format('%d', n)
local text = string.format('%d', amount)
redis.call('HINCRBY', KEYS[1], 'balance', -amount)
redis.call('HINCRBY', KEYS[1], 'out', amount)
redis.call('HINCRBY', KEYS[1], 'n', 1)
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*',
  'key', 'wallet#' .. txid, 'kind', 'to_wallet', 'player', ARGV[1], 'amount', text,
  'source', 'account', 'dest', 'outside', 'table', '', 'xfer', txid)
redis.call('HSET', KEYS[3], txid, 'credit|' .. text .. '|pending|' .. ARGV[4])
redis.call('RPUSH', KEYS[4], txid)
return {amount, txid}
