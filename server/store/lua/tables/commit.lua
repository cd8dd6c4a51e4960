-- One state change of a table, all or nothing, every key in the table's slot.
-- KEYS: 1 lease, 2 table hash, 3 events stream, 4 applied bucket (current),
--       5 applied bucket (previous), 6 applied bucket (two back, deleted),
--       7 table ledger, 8 transfers in, 9 transfers out, 10 logs out,
--       11 the request's record (when there is a request).
-- ARGV: 1 token, 2 expected version, 3 new version, 4 #parts, 5 table id,
--       6 events cap, 7 ledger maxlen, 8 channel ('' = none), 9 applied ttl ms,
--       10 #entries, 11 #events, 12 #log entries, 13 request fingerprint ('' = none),
--       14 request memo, 15 request ttl ms, 16 the requester's account balance after
--       the request ('' = not known here), 17 the transfer that pays the requester out
--       ('' = none), 18 commit id (names this commit: a retry of it carries the same),
--       19 '1' if the new version opens a new applied window (KEYS[6] is deleted then),
--       20 the new version's applied bucket (its number), 21 the time (ms), 22 '1' if
--       the previous applied bucket is consulted (KEYS[5]), then 8 per entry (key
--       kind player amount source dest transfer-id transfer), then 2 per event (seq
--       payload), then 2 per entry of the logs hash (name, the commit's game logs),
--       then 2 per part of the state (field of the table hash, value): at least one.
-- An entry from an account names the transfer the account reserved for it: its
-- record in KEYS[8] must be open, for that player and amount, and becomes
-- 'received'. An entry to an account starts a transfer: KEYS[9][id] = transfer.
-- Replies: {'OK', applied, skipped, id of each transfer from an account it took};
-- {'DUPLICATE', stored version}; {'REPEATED',
-- fingerprint, memo, account ('' unknown), payout transfer, version} (the request was
-- applied already, by the commit recorded there); {'VOIDED', transfer id} (a transfer
-- from an account is no longer open: refused, or never opened); or a refusal
-- ({'STALE_LEASE', token}, ...).
-- Each write gathers what it can (one HSET of the table hash, one of the applied
-- bucket, one of the logs): the commands a commit runs, and the bytes the append-only
-- file keeps of it, are most of the Redis work of a round.
local n_ent = tonumber(ARGV[10])
local n_evt = tonumber(ARGV[11])
local n_log = tonumber(ARGV[12])
local has_request = ARGV[13] ~= ''
local ent_base = 22
local evt_base = ent_base + 8 * n_ent
local log_base = evt_base + 2 * n_evt
local part_base = log_base + 2 * n_log
local n_part = tonumber(ARGV[4])
local new_version = tonumber(ARGV[3])

-- 1. Checks; no write before the last of them.
-- 's': the state whole, as tables were stored before parts (nil since their first
-- commit in parts, which deletes it).
-- 'f': the fence, the token of the table's last taking; 'ab': '<bucket>:<ms>', the
-- applied bucket whose time to live was last set, and when.
local stored = redis.call('HMGET', KEYS[2], 'v', 'tok', 'cid', 'seq', 'n', 'xn', 's', 'f', 'ab')
local stored_v = tonumber(stored[1] or '0')
-- The very same commit already stored (a retry after a lost reply): its version, by
-- this writer, under its id. Comparing its parts instead would take another commit
-- of that version whose parts happen to match for this one.
if stored_v == new_version and stored[2] == ARGV[1] and stored[3] == ARGV[18] then
  return {'DUPLICATE', stored_v}
end
-- Fenced: nobody took the table since this writer did (the fence is its token), else
-- the lease is its own (a table taken by an earlier version, which wrote no fence).
if stored[8] ~= ARGV[1] then
  local lease = redis.call('GET', KEYS[1])
  if not lease then
    return {'STALE_LEASE', ''}
  end
  local lease_token = string.match(lease, '^(%d+):')
  if lease_token ~= ARGV[1] then
    return {'STALE_LEASE', lease_token or ''}
  end
end
if stored_v ~= tonumber(ARGV[2]) then
  return {'STALE_VERSION', stored_v}
end
local last_seq = tonumber(stored[4] or '0')
if n_evt > 0 then
  -- Sequence numbers follow each other without gaps (events_since relies on it).
  -- (A stream whose top is not below them fails the first XADD, the first write.)
  if tonumber(ARGV[evt_base + 1]) ~= last_seq + 1 then
    return {'BAD_SEQ', last_seq}
  end
end
-- A client's money request applies once per (player, key) at this table (the claim
-- in the player's slot keeps it once across tables): a repeat changes nothing and
-- gets what the first one was told.
if has_request then
  local done = redis.call('HMGET', KEYS[11], 'f', 'm', 'a', 'x', 'v')
  if done[1] then
    return {'REPEATED', done[1], done[2] or '', done[3] or '', done[4] or '',
      tonumber(done[5] or '0')}
  end
end

-- Entries not yet applied (by an earlier commit, or earlier in this one); chips
-- from an account only on an open transfer of that player and amount.
local fresh = {}
local opened = {}  -- entry -> its transfer's record, for the entries from an account
if n_ent > 0 then
  local names = {}
  for i = 0, n_ent - 1 do
    names[i + 1] = ARGV[ent_base + 8 * i + 1]
  end
  local here = redis.call('HMGET', KEYS[4], unpack(names))
  local before = {}
  if ARGV[22] == '1' then
    before = redis.call('HMGET', KEYS[5], unpack(names))
  end
  local seen = {}
  for i = 0, n_ent - 1 do
    local b = ent_base + 8 * i
    local key = ARGV[b + 1]
    if not seen[key] and not here[i + 1] and not before[i + 1] then
      fresh[#fresh + 1] = b
      if ARGV[b + 5] == 'account' then
        local want = 'open:' .. ARGV[b + 3] .. ':' .. ARGV[b + 4] .. ':'
        local have = redis.call('HGET', KEYS[8], ARGV[b + 7])
        if not have or string.sub(have, 1, #want) ~= want then
          return {'VOIDED', ARGV[b + 7]}
        end
        opened[b] = have
      end
    end
    seen[key] = true
  end
end

-- 2. Writes. The events first, one stream entry for all of them (id the first one's
-- seq; fields e, e1, e2...: each the event of the seq that many after it): refused
-- (the stream's top is not below its id), the commit has written nothing.
if n_evt > 0 then
  local first = ARGV[evt_base + 1]
  local fields = {'e', ARGV[evt_base + 2]}
  for i = 1, n_evt - 1 do
    fields[2 * i + 1] = 'e' .. i
    fields[2 * i + 2] = ARGV[evt_base + 2 * i + 2]
  end
  local added = redis.pcall('XADD', KEYS[3], 'MAXLEN', ARGV[6], first .. '-0', unpack(fields))
  if type(added) == 'table' and added.err then
    -- Not above the top ('equal or smaller than the target stream top item'), or any
    -- other error (out of memory), given back as it is.
    if string.find(added.err, 'smaller', 1, true) then
      return {'BAD_SEQ', last_seq}
    end
    return added
  end
  if ARGV[8] ~= '' then
    for i = 0, n_evt - 1 do
      local seq = tonumber(ARGV[evt_base + 2 * i + 1])
      redis.call('PUBLISH', ARGV[8], struct.pack('>I8', seq) .. ARGV[evt_base + 2 * i + 2])
    end
  end
  last_seq = tonumber(ARGV[evt_base + 2 * (n_evt - 1) + 1])
end

local moved = 0
local taken = {}
local applied = {}
local received = {}
local sent = {}
for _, b in ipairs(fresh) do
  -- One field, 'm': the msgpack array [key, kind, player, amount, source, dest, table,
  -- transfer id (a movement to or from an account only)], because the field names of
  -- the earlier entries were half of a round's ledger bytes in the append-only file
  -- (server/store/archiving/records.py reads both).
  local entry = {ARGV[b + 1], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4], ARGV[b + 5],
    ARGV[b + 6], ARGV[5]}
  local xid = ARGV[b + 7]
  if xid ~= '' then
    entry[8] = xid
    moved = moved + 1
    if ARGV[b + 5] == 'account' then
      received[#received + 1] = xid
      received[#received + 1] = 'received' .. string.sub(opened[b], 5)
      taken[#taken + 1] = xid
    else
      sent[#sent + 1] = xid
      sent[#sent + 1] = ARGV[b + 8]
    end
  end
  local id = redis.call('XADD', KEYS[7], 'MAXLEN', '~', ARGV[7], '*', 'm', cmsgpack.pack(entry))
  applied[#applied + 1] = ARGV[b + 1]
  applied[#applied + 1] = id
end
-- The bucket's time to live is set by its first write and again once half of it has
-- passed (one PEXPIRE a window, not one a commit).
local ttl_set = false
if stored[9] then
  local bucket, set_ms = string.match(stored[9], '^(%d+):(%d+)$')
  ttl_set = bucket == ARGV[20] and tonumber(ARGV[21]) - tonumber(set_ms) < tonumber(ARGV[9]) / 2
end
if #fresh > 0 then
  redis.call('HSET', KEYS[4], unpack(applied))
  if not ttl_set then
    redis.call('PEXPIRE', KEYS[4], ARGV[9])
  end
end
if #received > 0 then
  redis.call('HSET', KEYS[8], unpack(received))
end
if #sent > 0 then
  redis.call('HSET', KEYS[9], unpack(sent))
end
-- Buckets two windows back are never consulted again.
if ARGV[19] == '1' then
  redis.call('DEL', KEYS[6])
end

local table_fields = {'v', ARGV[3], 'seq', string.format('%d', last_seq), 'cid', ARGV[18]}
if stored[2] ~= ARGV[1] then  -- the writer's token, written when it changes
  table_fields[#table_fields + 1] = 'tok'
  table_fields[#table_fields + 1] = ARGV[1]
end
if #fresh > 0 then
  table_fields[#table_fields + 1] = 'n'
  table_fields[#table_fields + 1] = string.format('%d', tonumber(stored[5] or '0') + #fresh)
end
if moved > 0 then
  table_fields[#table_fields + 1] = 'xn'
  table_fields[#table_fields + 1] = string.format('%d', tonumber(stored[6] or '0') + moved)
end
if #fresh > 0 and not ttl_set then
  table_fields[#table_fields + 1] = 'ab'
  table_fields[#table_fields + 1] = ARGV[20] .. ':' .. ARGV[21]
end
for i = 1, 2 * n_part do
  table_fields[#table_fields + 1] = ARGV[part_base + i]
end
redis.call('HSET', KEYS[2], unpack(table_fields))
-- The state whole, as tables were stored before parts: the first commit in parts
-- gives every part (the caller's side of the bargain).
if stored[7] then
  redis.call('HDEL', KEYS[2], 's')
end
if has_request then
  local record = {'f', ARGV[13], 'm', ARGV[14], 'v', ARGV[3]}
  if ARGV[16] ~= '' then
    record[#record + 1] = 'a'
    record[#record + 1] = ARGV[16]
  end
  if ARGV[17] ~= '' then
    record[#record + 1] = 'x'
    record[#record + 1] = ARGV[17]
  end
  redis.call('HSET', KEYS[11], unpack(record))
  redis.call('PEXPIRE', KEYS[11], ARGV[15])
end

if n_log > 0 then
  redis.call('HSET', KEYS[10], unpack(ARGV, log_base + 1, log_base + 2 * n_log))
end

local reply = {'OK', #fresh, n_ent - #fresh}
for _, xid in ipairs(taken) do reply[#reply + 1] = xid end
return reply
