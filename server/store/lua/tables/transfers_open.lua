-- Before chips come from accounts: the commit already stored?, the request's record
-- at this table, and the transfers the accounts will reserve (by the table's holder
-- only, and not for entries the table applied already).
-- KEYS: 1 lease, 2 transfers in, 3 the request's record (or KEYS[2]: none),
--       4 table hash, 5 applied bucket (current), 6 applied bucket (previous).
-- ARGV: 1 token, 2 '1' if KEYS[3] is a request's record, 3 the commit's new version,
--       4 its commit id, 5 '1' if the previous applied bucket is consulted (as COMMIT
--       does), then 3 per transfer (id, 'open:<player>:<amount>:<ms>:<kind>', the
--       ledger key of its entry).
-- Replies: {'OK', id of each transfer not opened because its entry was applied};
-- {'STALE_LEASE'}; {'DUPLICATE'} (this very commit is stored); {'REPEATED',
-- fingerprint, memo, account ('' unknown), payout transfer, version} (the request
-- was applied here already). Only OK writes, and never over a transfer recorded.
local stored = redis.call('HMGET', KEYS[4], 'v', 'tok', 'cid', 'f')
if stored[4] ~= ARGV[1] then  -- not fenced by this writer: its lease, as in COMMIT
  local lease = redis.call('GET', KEYS[1])
  if not lease or string.match(lease, '^(%d+):') ~= ARGV[1] then
    return {'STALE_LEASE'}
  end
end
if stored[1] == ARGV[3] and stored[2] == ARGV[1] and stored[3] == ARGV[4] then
  return {'DUPLICATE'}
end
if ARGV[2] == '1' then
  local done = redis.call('HMGET', KEYS[3], 'f', 'm', 'a', 'x', 'v')
  if done[1] then
    return {'REPEATED', done[1], done[2] or '', done[3] or '', done[4] or '',
      tonumber(done[5] or '0')}
  end
end
local out = {'OK'}
for i = 6, #ARGV, 3 do
  if redis.call('HEXISTS', KEYS[5], ARGV[i + 2]) == 1
      or (ARGV[5] == '1' and redis.call('HEXISTS', KEYS[6], ARGV[i + 2]) == 1) then
    out[#out + 1] = ARGV[i]
  else
    redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1])
  end
end
return out
